package plotfile

import "errors"

func readCSV(body []byte, o Options) (*Converted, error) { return nil, errors.New("not yet") }
