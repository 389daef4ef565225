package plotfile

import "errors"

func readShapefile(body []byte, o Options) (*Converted, error) { return nil, errors.New("not yet") }
