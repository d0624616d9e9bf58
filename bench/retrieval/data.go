package main

import "github.com/arbormem/arbor/bench/internal/dataset"

// The data sets are read by bench/internal/dataset, which bench/scale
// shares; these are its names as this harness uses them.
type (
	locomoConv    = dataset.LocomoConv
	locomoSession = dataset.LocomoSession
	locomoTurn    = dataset.LocomoTurn
	lmeQuestion   = dataset.LMEQuestion
	lmeMessage    = dataset.LMEMessage
	// TurnID is a LoCoMo dialogue id "D<session>:<turn>".
	TurnID = dataset.TurnID
)

var (
	loadLocomo      = dataset.LoadLocomo
	loadLongMemEval = dataset.LoadLongMemEval
	parseLocomoDate = dataset.ParseLocomoDate
	parseLMEDate    = dataset.ParseLMEDate
	isRole          = dataset.IsRole
	// ParseTurnID parses one dialogue id; fixed reports that it was repaired.
	ParseTurnID = dataset.ParseTurnID
)
