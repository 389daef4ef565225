package plotfile

import "errors"

func readXLSX(body []byte, o Options) (*Converted, error) { return nil, errors.New("not yet") }
