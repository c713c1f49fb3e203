// neuron-report: how each job used the hardware (docs/jobs.md), from neuron-monitord's job
// accounting or a recording.
#include <CLI/CLI.hpp>
#include <iostream>

#include "client/embedded_simulator.h"
#include "exporter/report_app.h"
#include "proto/wire/protobuf_logs.h"

int main(int argc, char** argv) {
  using namespace neuronmon;
  exporter::ReportCommandLine command_line;
  CLI::App app{"neuron-report: how each training or inference job used the Neuron hardware"};
  exporter::AddReportOptions(app, command_line);
  CLI11_PARSE(app, argc, argv);
  // A daemon can send frames libprotobuf complains about; our decoder already says so, once.
  wire::SilenceProtobufParseLogs();
  return exporter::RunReport(command_line, client::EmbeddedReplay(), client::EmbeddedSimulator(),
                             std::cout, std::cerr);
}
