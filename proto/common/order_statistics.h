// Order statistics of a handful of figures: the median that compares a host or a device with its
// peers (the daemon's analyzer, the client's cluster comparison). It takes its figures by value and
// sorts its own copy. Pure; thread-safe.
#pragma once

#include <vector>

namespace neuronmon {

// The middle value of `values`; the mean of the two middle ones when their number is even; 0 when
// there are none.
double Median(std::vector<double> values);

}  // namespace neuronmon
