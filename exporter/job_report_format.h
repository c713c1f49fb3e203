// neuron-report's documents (docs/jobs.md): the list of jobs, and one job's report as a terminal
// page (with a utilization sparkline and where its time went), as JSON, or as Markdown to paste
// into a ticket. Pure functions over v1::JobReport; everything a process or a daemon wrote (ids,
// command lines, users) is stripped of control characters (text, Markdown) or escaped (JSON).
// Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "neuronmon/v1/report.pb.h"
#include "proto/common/clock.h"
#include "proto/common/status.h"

namespace neuronmon::exporter {

struct JobFormatOptions {
  // The model's FLOPs per step (--model-flops): model FLOPs utilization from the job's steps
  // (completed executions per process) when the backend does not count the model's FLOPs.
  double model_flops_per_step = 0;
  WallTime now;  // the time a live job's figures are as of (shown with them)
};

// The jobs as a table, live ones first: "no jobs" when there are none.
std::string RenderJobList(const std::vector<v1::JobReport>& jobs, const JobFormatOptions& options);
// The same as a JSON array of the JSON objects RenderJobJson writes.
std::string RenderJobListJson(const std::vector<v1::JobReport>& jobs,
                              const JobFormatOptions& options);

std::string RenderJobText(const v1::JobReport& job, const JobFormatOptions& options);
std::string RenderJobJson(const v1::JobReport& job, const JobFormatOptions& options);
std::string RenderJobMarkdown(const v1::JobReport& job, const JobFormatOptions& options);

// `rows` (the first the headings) as left-aligned columns two spaces apart, each line without
// trailing blanks. The cells must be terminal-safe already.
std::string RenderColumns(const std::vector<std::vector<std::string>>& rows);

// The job `key` names among `jobs`: its number, its id ("slurm-4242"), or a Slurm job id
// ("4242"); the newest when several match. NotFound lists what there is.
Result<v1::JobReport> FindJob(const std::vector<v1::JobReport>& jobs, const std::string& key);

// Model FLOPs utilization as the report shows it: the backend's model FLOPs, else
// `model_flops_per_step` times the steps; 0 when neither is known.
double ModelFlopsUtilization(const v1::JobReport& job, double model_flops_per_step);

}  // namespace neuronmon::exporter
