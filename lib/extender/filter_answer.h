// File: lib/extender/filter_answer.h
// The /filter answer written straight from the verdicts: the same bytes as
// EncodeFilterResult(Filter(view, args)), without building the result's maps of copied names
// and reasons first (at hundreds of candidates, those copies cost more than the decisions).
#pragma once

#include <string>

#include "lib/extender/decide.h"
#include "lib/extender/wire.h"

namespace neuron::extender {

std::string EncodeFilterAnswer(const ExtenderArgs& args, const FilterVerdicts& verdicts);

}  // namespace neuron::extender
