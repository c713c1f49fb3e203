// Order statistics of a handful of figures: the median that compares a host or a device with its
// peers (the daemon's analyzer, the client's cluster comparison), and the quantiles the load tools
// in bench/ print. Each takes its figures by value and sorts its own copy. Pure; thread-safe.
#pragma once

#include <vector>

namespace neuronmon {

// The middle value of `values`; the mean of the two middle ones when their number is even; 0 when
// there are none.
double Median(std::vector<double> values);

// How the rank q·(n−1) of a quantile becomes the index of one of the n values.
enum class RankRounding {
  kDown,     // the value at or below the rank
  kNearest,  // the value nearest the rank; a half rounds up
};

// The `q` quantile of `values` as one of them: the value at rank q·(n−1) of the ascending order
// (0-based), rounded as `rounding` says; 0 when there are none. REQUIRES: 0 <= q <= 1.
double Quantile(std::vector<double> values, double q, RankRounding rounding);

}  // namespace neuronmon
