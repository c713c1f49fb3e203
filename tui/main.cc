// neuron-top: the live terminal view of neuron-monitord's stream.
#include <CLI/CLI.hpp>
#include <clocale>
#include <cstdlib>
#include <iostream>
#include <variant>

#include "client/embedded_simulator.h"
#include "proto/wire/protobuf_logs.h"
#include "tui/app.h"
#include "tui/top_options.h"

int main(int argc, char** argv) {
  using namespace neuronmon;
  std::setlocale(LC_ALL, "");
  tui::TopCommandLine command_line;
  CLI::App app{"neuron-top: live NeuronCore, HBM, collective and memory view, with a diagnosis"};
  tui::AddTopOptions(app, command_line);
  CLI11_PARSE(app, argc, argv);
  // A daemon can send frames libprotobuf complains about; our decoder already says so, once.
  wire::SilenceProtobufParseLogs();

  client::OptionsOr<tui::AppOptions> resolved = tui::ResolveTopOptions(
      command_line, {std::getenv("NO_COLOR"), std::getenv("COLUMNS"), std::getenv("LINES")});
  if (const auto* refused = std::get_if<client::CommandLineError>(&resolved)) {
    return client::Refuse("neuron-top", *refused, std::cerr);
  }
  tui::AppOptions& options = std::get<tui::AppOptions>(resolved);
  if (options.replay) {
    options.open_replay = client::EmbeddedReplay();
  } else {
    options.endpoint.start_local = client::EmbeddedSimulator();
  }
  return tui::RunTop(options);
}
