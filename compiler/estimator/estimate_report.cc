#include "compiler/estimator/estimate_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hloscope {
namespace {

std::string escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string format(const char* spec, double value) {
    if (!std::isfinite(value)) return "-";
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, spec, value);
    return buffer;
}

std::string ms(double seconds) { return format("%.4g ms", seconds * 1e3); }
std::string mb(int64_t bytes) {
    return bytes > 0 ? format("%.4g MB", static_cast<double>(bytes) / 1e6) : "-";
}
std::string factor(double x) { return x > 0 ? format("%.3gx", x) : "-"; }
std::string percent(std::optional<double> x) { return x ? format("%+.1f%%", *x) : "-"; }

std::string breakEven(const EstimateFigures& f) {
    const int64_t runs = f.breakEvenRuns();
    return runs < 0 ? "never" : "after " + std::to_string(runs) + (runs == 1 ? " run" : " runs");
}

constexpr const char* kPredictedColour = "#1f4e9c";
constexpr const char* kMeasuredColour = "#1d7a2e";

// Grouped bars: unfused and fused, predicted and (when known) measured.
std::string timeBars(const Estimate& e) {
    struct Bar {
        std::string label;
        double seconds;
        const char* colour;
    };
    std::vector<Bar> bars = {{"unfused predicted", e.predicted.unfusedSeconds, kPredictedColour},
                             {"fused predicted", e.predicted.fusedSeconds, kPredictedColour}};
    if (e.measured) {
        bars.insert(bars.begin() + 1,
                    {"unfused measured", e.measured->unfusedSeconds, kMeasuredColour});
        bars.push_back({"fused measured", e.measured->fusedSeconds, kMeasuredColour});
    }
    double top = 0;
    for (const Bar& bar : bars) top = std::max(top, bar.seconds);
    if (!(top > 0)) return {};
    const int width = 520, rowHeight = 26, labelWidth = 150;
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                      "\" height=\"" +
                      std::to_string(rowHeight * static_cast<int>(bars.size()) + 10) +
                      "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    for (size_t i = 0; i < bars.size(); ++i) {
        const int y = 5 + static_cast<int>(i) * rowHeight;
        const double length = (width - labelWidth - 90) * bars[i].seconds / top;
        svg += "<text x=\"0\" y=\"" + std::to_string(y + 15) + "\">" + bars[i].label + "</text>";
        svg += "<rect x=\"" + std::to_string(labelWidth) + "\" y=\"" + std::to_string(y) +
               "\" width=\"" + format("%.1f", std::max(length, 1.0)) + "\" height=\"20\" fill=\"" +
               bars[i].colour + "\"/>";
        svg += "<text x=\"" + format("%.1f", labelWidth + length + 5) + "\" y=\"" +
               std::to_string(y + 15) + "\">" + ms(bars[i].seconds) + "</text>\n";
    }
    return svg + "</svg>\n";
}

// Predicted (x) against measured (y) kernel times, log-log, with y = x.
std::string kernelScatter(const Estimate& e) {
    struct Point {
        double predicted, measured;
        std::string name;
        bool fused;
    };
    std::vector<Point> points;
    for (bool fused : {false, true})
        for (const KernelEstimate& k : fused ? e.fusedKernels : e.unfusedKernels)
            if (k.measuredSeconds && *k.measuredSeconds > 0 && k.predictedSeconds > 0)
                points.push_back({k.predictedSeconds, *k.measuredSeconds, k.name, fused});
    if (points.empty()) return {};
    double low = 1e300, high = 0;
    for (const Point& p : points) {
        low = std::min({low, p.predicted, p.measured});
        high = std::max({high, p.predicted, p.measured});
    }
    const double lo = std::floor(std::log10(low)),
                 hi = std::max(lo + 1, std::ceil(std::log10(high)));
    const int size = 320, margin = 50;
    auto at = [&](double seconds) {
        return margin + (std::log10(seconds) - lo) / (hi - lo) * size;
    };
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                      std::to_string(size + 2 * margin) + "\" height=\"" +
                      std::to_string(size + 2 * margin) +
                      "\" font-family=\"sans-serif\" font-size=\"11\">\n";
    const int bottom = margin + size;
    svg += "<rect x=\"" + std::to_string(margin) + "\" y=\"" + std::to_string(margin) +
           "\" width=\"" + std::to_string(size) + "\" height=\"" + std::to_string(size) +
           "\" fill=\"none\" stroke=\"#999\"/>\n";
    svg += "<line x1=\"" + std::to_string(margin) + "\" y1=\"" + std::to_string(bottom) +
           "\" x2=\"" + std::to_string(margin + size) + "\" y2=\"" + std::to_string(margin) +
           "\" stroke=\"#bbb\" stroke-dasharray=\"4 3\"/>\n";
    for (double d = lo; d <= hi; d += 1) {
        const double v = margin + (d - lo) / (hi - lo) * size;
        const std::string label = ms(std::pow(10.0, d));
        svg += "<text x=\"" + format("%.1f", v) + "\" y=\"" + std::to_string(bottom + 15) +
               "\" text-anchor=\"middle\">" + label + "</text>";
        svg += "<text x=\"" + std::to_string(margin - 4) + "\" y=\"" +
               format("%.1f", 2 * margin + size - v + 4) + "\" text-anchor=\"end\">" + label +
               "</text>\n";
    }
    svg += "<text x=\"" + std::to_string(margin + size / 2) + "\" y=\"" +
           std::to_string(bottom + 32) + "\" text-anchor=\"middle\">predicted</text>";
    svg += "<text x=\"12\" y=\"" + std::to_string(margin + size / 2) +
           "\" transform=\"rotate(-90 12 " + std::to_string(margin + size / 2) +
           ")\" text-anchor=\"middle\">measured</text>\n";
    for (const Point& p : points) {
        const double x = at(p.predicted), y = 2 * margin + size - at(p.measured);
        svg += "<circle cx=\"" + format("%.1f", x) + "\" cy=\"" + format("%.1f", y) +
               "\" r=\"4\" fill=\"" + (p.fused ? kMeasuredColour : kPredictedColour) +
               "\" fill-opacity=\"0.7\"><title>" + escape(p.name) +
               (p.fused ? " (fused)" : " (unfused)") + ": predicted " + ms(p.predicted) +
               ", measured " + ms(p.measured) + "</title></circle>\n";
    }
    return svg + "</svg>\n";
}

std::string figuresRow(const char* label, const char* cls, const EstimateFigures& f) {
    return std::string("<tr class=") + cls + "><td>" + label + "</td><td>" + ms(f.unfusedSeconds) +
           "</td><td>" + ms(f.fusedSeconds) + "</td><td>" + factor(f.speedup()) + "</td><td>" +
           mb(f.peakBytesUnfused) + "</td><td>" + mb(f.peakBytesFused) + "</td><td>" +
           factor(f.memoryReduction()) + "</td><td>" + ms(f.compileSeconds) + "</td><td>" +
           breakEven(f) + "</td></tr>\n";
}

std::string kernelTable(const char* title, const std::vector<KernelEstimate>& kernels) {
    if (kernels.empty()) return {};
    std::string html = std::string("<h4>") + title +
                       "</h4>\n<table><tr><th>kernel</th><th>opcode</th><th class=p>predicted</th>"
                       "<th class=m>measured</th><th>error</th></tr>\n";
    for (const KernelEstimate& k : kernels)
        html += "<tr><td>" + escape(k.name) + "</td><td>" + escape(k.opcode) + "</td><td class=p>" +
                ms(k.predictedSeconds) + "</td><td class=m>" +
                (k.measuredSeconds ? ms(*k.measuredSeconds) : "-") + "</td><td>" +
                percent(k.errorPercent()) + "</td></tr>\n";
    return html + "</table>\n";
}

}  // namespace

std::string estimateReportHtml(const std::vector<ReportedEstimate>& estimates,
                               const std::string& generated) {
    std::string html =
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hloscope estimate</title>\n"
        "<style>body{font-family:sans-serif;margin:2em;max-width:72em}table{border-collapse:"
        "collapse;margin:1em 0}"
        "td,th{border:1px solid #bbb;padding:3px "
        "8px;text-align:left}th{background:#eee}.p{color:#1f4e9c}"
        ".m{color:#1d7a2e}.u{color:#8a4b00}svg{display:block;margin:0.5em 0}</style></head><body>\n"
        "<h1>hloscope estimate</h1>\n<p>Generated " +
        escape(generated) +
        ". Labels: <span class=p>predicted</span> (performance model, buffer assignment, the "
        "pipeline's own "
        "time as compile cost), <span class=m>measured</span> (runs on the named device: medians, "
        "the "
        "device's allocations, compile time with code generation), <span "
        "class=u>user-entered</span> "
        "(baselines). Break-even: runs before fusion's time saved repays the compile time.</p>\n";
    // Summary over every module.
    html +=
        "<h2>Summary</h2>\n<table><tr><th>module</th><th>target</th><th>device</th>"
        "<th class=p>speedup predicted</th><th class=m>speedup measured</th><th>speedup error</th>"
        "<th class=p>memory reduction predicted</th><th class=m>memory reduction measured</th>"
        "<th>kernel |error| median / worst</th><th class=m>break-even</th></tr>\n";
    std::vector<double> speedupErrors;
    for (const ReportedEstimate& r : estimates) {
        const Estimate& e = r.estimate;
        const ErrorSummary kernels = e.kernelErrors();
        if (auto error = e.speedupErrorPercent()) speedupErrors.push_back(std::fabs(*error));
        html += "<tr><td><a href=\"#m" + std::to_string(&r - estimates.data()) + "\">" +
                escape(r.name) + "</a></td><td>" + escape(e.target) + "</td><td>" +
                (e.device.empty() ? "-" : escape(e.device)) + "</td><td class=p>" +
                factor(e.predicted.speedup()) + "</td><td class=m>" +
                (e.measured ? factor(e.measured->speedup()) : "-") + "</td><td>" +
                percent(e.speedupErrorPercent()) + "</td><td class=p>" +
                factor(e.predicted.memoryReduction()) + "</td><td class=m>" +
                (e.measured ? factor(e.measured->memoryReduction()) : "-") + "</td><td>" +
                (kernels.count ? format("%.1f%%", kernels.medianAbsPercent) + " / " +
                                     format("%.1f%%", kernels.worstAbsPercent)
                               : std::string("-")) +
                "</td><td class=m>" + breakEven(e.measured ? *e.measured : e.predicted) +
                "</td></tr>\n";
    }
    html += "</table>\n";
    if (!speedupErrors.empty()) {
        const double worst = *std::max_element(speedupErrors.begin(), speedupErrors.end());
        html += "<p>Predicted speedup against measured over " +
                std::to_string(speedupErrors.size()) + " module(s): median |error| " +
                format("%.1f%%", median(speedupErrors)) + ", worst " + format("%.1f%%", worst) +
                ".</p>\n";
    }
    for (const ReportedEstimate& r : estimates) {
        const Estimate& e = r.estimate;
        html += "<h2 id=\"m" + std::to_string(&r - estimates.data()) + "\">" + escape(r.name) +
                " on " + escape(e.target) + "</h2>\n";
        html +=
            "<table><tr><th></th><th>unfused</th><th>fused</th><th>speedup</th><th>peak "
            "unfused</th>"
            "<th>peak fused</th><th>memory "
            "reduction</th><th>compile</th><th>break-even</th></tr>\n";
        html += figuresRow("predicted", "p", e.predicted);
        if (e.measured)
            html += figuresRow((std::string(measuredWord(e)) + " on " + escape(e.device)).c_str(),
                               "m", *e.measured);
        html += "</table>\n";
        if (e.measured)
            html += "<p>Speedup error " + percent(e.speedupErrorPercent()) +
                    ", memory reduction error " + percent(e.memoryErrorPercent()) + ".</p>\n";
        if (r.baseline && r.baselineInput && r.baseline->ok()) {
            const std::string tu(timeUnitName(r.baselineInput->timeUnit)),
                mu(memoryUnitName(r.baselineInput->memoryUnit));
            html += "<p class=u>Your baseline: " + escape(r.baselineInput->baselineTime) + " " +
                    tu + ", " + escape(r.baselineInput->baselineMemory) + " " + mu + " &rarr; " +
                    format("%.4g", r.baseline->optimizedTime) + " " + tu + " (saves " +
                    format("%.1f", r.baseline->timeSavedPercent) + "%), " +
                    format("%.4g", r.baseline->optimizedMemory) + " " + mu + " (saves " +
                    format("%.1f", r.baseline->memorySavedPercent) + "%), with the " +
                    (e.measured ? "measured" : "predicted") + " factors.</p>\n";
        }
        html += timeBars(e);
        if (!e.fallbacks.empty()) {
            html += "<p>Run by the interpreter instead of compiled:</p><ul>\n";
            for (const std::string& f : e.fallbacks) html += "<li>" + escape(f) + "</li>\n";
            html += "</ul>\n";
        }
        const std::string scatter = kernelScatter(e);
        if (!scatter.empty())
            html +=
                "<h3>Kernel times, predicted vs measured</h3>\n<p><span class=p>&#9679;</span> "
                "unfused "
                "<span class=m>&#9679;</span> fused; the dashed line is a perfect "
                "prediction.</p>\n" +
                scatter;
        html += kernelTable("Kernels, unfused", e.unfusedKernels);
        html += kernelTable("Kernels, fused", e.fusedKernels);
    }
    return html + "</body></html>\n";
}

}  // namespace hloscope
