#include "proto/wire/protobuf_logs.h"

#include <google/protobuf/stubs/logging.h>

#include <cstdio>
#include <string>

namespace neuronmon::wire {
namespace {

void Handler(google::protobuf::LogLevel level, const char* filename, int line,
             const std::string& message) {
  if (level < google::protobuf::LOGLEVEL_FATAL) return;
  std::fprintf(stderr, "[libprotobuf FATAL %s:%d] %s\n", filename, line, message.c_str());
}

}  // namespace

void SilenceProtobufParseLogs() { google::protobuf::SetLogHandler(&Handler); }

}  // namespace neuronmon::wire
