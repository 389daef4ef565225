package plotfile

import "errors"

func readKML(body []byte, o Options) (*Converted, error) { return nil, errors.New("not yet") }

func readKMZ(body []byte, o Options) (*Converted, error) { return nil, errors.New("not yet") }
