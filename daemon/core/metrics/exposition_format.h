// Which output format a scrape gets, and rendering in it: the daemon renders its one model, an
// Exposition (exposition.h), as Prometheus text format 0.0.4 (exposition_text.h) or OpenMetrics 1.0
// (openmetrics.h), as the request's Accept header chooses. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "daemon/core/metrics/exposition.h"

namespace neuronmon::daemon {

enum class ExpositionFormat {
  kText,         // text/plain; version=0.0.4
  kOpenMetrics,  // application/openmetrics-text; version=1.0.0
};

// RenderText or RenderOpenMetrics, as `format` says.
std::string Render(const Exposition& exposition, ExpositionFormat format);

// The Content-Type header value for `format`.
std::string_view ContentType(ExpositionFormat format);

// OpenMetrics when the highest-preference acceptable media range of `accept_header` (q > 0,
// ties in header order) is application/openmetrics-text with version 1.0.0 or no version;
// text format otherwise, also for an empty or unparsable header (as client_golang negotiates;
// q-values are read leniently, WeightSyntax::kLenient in proto/common/http_lists.h).
ExpositionFormat ChooseFormat(std::string_view accept_header);

}  // namespace neuronmon::daemon
