// The estimate as one self-contained HTML file (no scripts, no external
// files; charts as inline SVG), for attaching to a bug or a design review:
// a summary of every module (predicted and measured speedup, memory
// reduction, compile time, break-even, error), then per module its figures,
// a bar chart of predicted vs measured time per mode, a log-log scatter of
// predicted vs measured kernel times and the kernel table. Every number is
// labelled predicted, measured or user-entered.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/estimator/calculator.h"
#include "compiler/estimator/estimate.h"

namespace hloscope {

struct ReportedEstimate {
    std::string name;  // file or example name
    Estimate estimate;
    // The user's baseline scaled by the estimate's factors, when given.
    std::optional<CalculatorInput> baselineInput;
    std::optional<CalculatorResult> baseline;
};

// `generated` is the time stamp printed in the header (ISO 8601).
std::string estimateReportHtml(const std::vector<ReportedEstimate>& estimates,
                               const std::string& generated);

}  // namespace hloscope
