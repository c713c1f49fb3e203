#include "proto/names/names.h"

namespace neuronmon {

const char* FindingKindName(v1::FindingKind kind) {
  switch (kind) {
    case v1::FINDING_KIND_HEALTHY:
      return "healthy";
    case v1::FINDING_KIND_INPUT_BOUND:
      return "input_bound";
    case v1::FINDING_KIND_COLLECTIVE_BOUND:
      return "collective_bound";
    case v1::FINDING_KIND_HBM_BOUND:
      return "hbm_bound";
    case v1::FINDING_KIND_STRAGGLER:
      return "straggler";
    case v1::FINDING_KIND_IDLE_ALLOCATED:
      return "idle_allocated";
    case v1::FINDING_KIND_ERRORS:
      return "errors";
    default:
      return "unspecified";
  }
}

const char* SeverityName(v1::Severity severity) {
  switch (severity) {
    case v1::SEVERITY_INFO:
      return "info";
    case v1::SEVERITY_WARNING:
      return "warning";
    case v1::SEVERITY_CRITICAL:
      return "critical";
    default:
      return "unspecified";
  }
}

const char* CollectiveOpName(v1::CollectiveOp op) {
  switch (op) {
    case v1::COLLECTIVE_OP_ALL_REDUCE:
      return "all_reduce";
    case v1::COLLECTIVE_OP_ALL_GATHER:
      return "all_gather";
    case v1::COLLECTIVE_OP_REDUCE_SCATTER:
      return "reduce_scatter";
    case v1::COLLECTIVE_OP_ALL_TO_ALL:
      return "all_to_all";
    case v1::COLLECTIVE_OP_SEND_RECV:
      return "send_recv";
    default:
      return "unspecified";
  }
}

}  // namespace neuronmon
