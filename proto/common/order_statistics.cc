#include "proto/common/order_statistics.h"

#include <algorithm>
#include <cstddef>

namespace neuronmon {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double Quantile(std::vector<double> values, double q, RankRounding rounding) {
  if (values.empty()) return 0;
  const double rank = q * static_cast<double>(values.size() - 1);
  const auto k = static_cast<std::size_t>(rounding == RankRounding::kNearest ? rank + 0.5 : rank);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

}  // namespace neuronmon
