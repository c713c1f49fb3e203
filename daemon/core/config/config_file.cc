#include "daemon/core/config/config_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "daemon/core/config/settings.h"
#include "proto/common/json_reader.h"

namespace neuronmon::daemon {
namespace {

constexpr std::size_t kMaxConfigBytes = 1 << 20;

// Appends `found` to `problems` as "SOURCE: FIELD: what" ("FIELD: what" without a source); the
// first becomes the Status.
Status Publish(const Found& found, const std::string& source, std::vector<std::string>* problems) {
  if (found.empty()) return Status::Ok();
  const std::string prefix = source.empty() ? "" : source + ": ";
  for (const std::string& p : found) {
    if (problems != nullptr) problems->push_back(prefix + p);
  }
  return Status::InvalidArgument(prefix + found.front());
}

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

Result<std::string> ReadConfigText(const std::string& path) {
  errno = 0;
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) {
    const int error = errno;
    std::string message = path + ": cannot open: " + std::strerror(error);
    if (error == ENOENT) return Status::NotFound(std::move(message));
    return Status::IoError(std::move(message));
  }
  // One byte more than the limit tells "exactly 1 MiB" from "larger".
  std::string text(kMaxConfigBytes + 1, '\0');
  const std::size_t size = std::fread(text.data(), 1, text.size(), file.get());
  if (std::ferror(file.get())) {
    return Status::IoError(path + ": cannot read: " + std::strerror(errno));
  }
  if (size > kMaxConfigBytes) return Status::InvalidArgument(path + ": file larger than 1 MiB");
  text.resize(size);
  return text;
}

}  // namespace

std::string DefaultConfigText() { return SettingsFileText(DefaultConfig()); }

Result<DaemonConfig> ParseConfig(std::string_view text, const std::string& source,
                                 std::vector<std::string>* problems) {
  Result<nlohmann::json> json = ParseJsonWithComments(text, source);
  if (!json.ok()) {
    if (problems != nullptr) problems->push_back(json.status().message());
    return json.status();
  }
  Found found;
  DaemonConfig config = DefaultConfig();
  ReadSettings(*json, config, found);
  CheckSettings(config, found);
  if (Status status = Publish(found, source, problems); !status.ok()) return status;
  return config;
}

Result<DaemonConfig> LoadConfigFile(const std::string& path, std::vector<std::string>* problems) {
  Result<std::string> text = ReadConfigText(path);
  if (!text.ok()) {
    if (problems != nullptr) problems->push_back(text.status().message());
    return text.status();
  }
  return ParseConfig(*text, path, problems);
}

Status ValidateConfig(const DaemonConfig& config, std::vector<std::string>* problems,
                      const std::string& source) {
  Found found;
  CheckSettings(config, found);
  return Publish(found, source, problems);
}

std::string ConfigToJson(const DaemonConfig& c) { return SettingsToJson(c).dump(2); }

}  // namespace neuronmon::daemon
