#include "daemon/core/metrics/exposition_format.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <system_error>
#include <utility>

#include "daemon/core/metrics/exposition_text.h"
#include "daemon/core/metrics/openmetrics.h"

namespace neuronmon::daemon {
namespace {

std::string ToLowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

std::string_view Trim(std::string_view s) {
  const std::size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

// The format one Accept media range decides for, if any, and its q value.
std::pair<std::optional<ExpositionFormat>, double> ParseMediaRange(std::string_view range) {
  std::size_t semicolon = range.find(';');
  const std::string type = ToLowerAscii(Trim(range.substr(0, semicolon)));
  std::optional<std::string> version;
  double q = 1;
  while (semicolon != std::string_view::npos) {
    range.remove_prefix(semicolon + 1);
    semicolon = range.find(';');
    const std::string_view param = range.substr(0, semicolon);
    const std::size_t eq = param.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string key = ToLowerAscii(Trim(param.substr(0, eq)));
    std::string_view value = Trim(param.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (key == "version") version = std::string(value);
    if (key == "q" &&
        std::from_chars(value.data(), value.data() + value.size(), q).ec != std::errc{}) {
      q = 0;
    }
  }
  if (type == "text/plain" && (!version || *version == "0.0.4")) {
    return {ExpositionFormat::kText, q};
  }
  if (type == "application/openmetrics-text" && (!version || *version == "1.0.0")) {
    return {ExpositionFormat::kOpenMetrics, q};
  }
  return {std::nullopt, q};
}

}  // namespace

std::string Render(const Exposition& exposition, ExpositionFormat format) {
  return format == ExpositionFormat::kOpenMetrics ? RenderOpenMetrics(exposition)
                                                  : RenderText(exposition);
}

std::string_view ContentType(ExpositionFormat format) {
  return format == ExpositionFormat::kOpenMetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

ExpositionFormat ChooseFormat(std::string_view accept_header) {
  ExpositionFormat best = ExpositionFormat::kText;
  double best_q = 0;
  while (!accept_header.empty()) {
    const std::size_t comma = std::min(accept_header.find(','), accept_header.size());
    const auto [format, q] = ParseMediaRange(accept_header.substr(0, comma));
    if (format && q > best_q) {
      best = *format;
      best_q = q;
    }
    accept_header.remove_prefix(std::min(comma + 1, accept_header.size()));
  }
  return best;
}

}  // namespace neuronmon::daemon
