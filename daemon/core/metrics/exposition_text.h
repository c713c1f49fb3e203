// Prometheus text format 0.0.4 as client_golang writes it: renders an Exposition (exposition.h),
// spelling numbers as Go does. Rendering cannot fail. Pure functions; thread-safe.
#pragma once

#include <string>

#include "daemon/core/metrics/exposition.h"

namespace neuronmon::daemon {

// Prometheus text format 0.0.4; info families become gauges of value 1 under their given name.
std::string RenderText(const Exposition& exposition);

// A value as client_golang's text writer spells it: Go's strconv.FormatFloat(v, 'g', -1, 64),
// i.e. the shortest digits that read back exactly, in exponent form when the decimal exponent is
// below -4 or at least 6 ("1e-05", "123456", "1.234567e+06"); "NaN", "+Inf", "-Inf"; "0" for -0.
std::string FormatTextFloat(double value);

}  // namespace neuronmon::daemon
