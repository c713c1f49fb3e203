// OpenMetrics 1.0 as client_golang writes it: renders an Exposition (exposition.h) with the
// OpenMetrics family names, UNIT lines, `_created` samples and number spelling. Rendering cannot
// fail. Pure functions; thread-safe.
#pragma once

#include <string>

#include "daemon/core/metrics/exposition.h"

namespace neuronmon::daemon {

// OpenMetrics 1.0, ending with "# EOF\n".
std::string RenderOpenMetrics(const Exposition& exposition);

// As FormatTextFloat (exposition_text.h), plus ".0" when the result has neither '.' nor an
// exponent ("1.0", "42.0").
std::string FormatOpenMetricsFloat(double value);

}  // namespace neuronmon::daemon
