// The Memory Usage Details tree: ND -> NC -> model -> categories, as AWS's neuron-top shows it.
#include "tui/tree.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "proto/names/names.h"
#include "tui/format.h"
#include "tui/sections.h"

namespace neuronmon::tui {
namespace {

struct Category {
  const char* name;
  double bytes;
};

struct ModelNode {
  std::string id;
  std::string name;
  std::uint32_t model_id = 0;
  double device = 0, host = 0;
  std::vector<Category> categories;
};

struct CoreNode {
  std::uint32_t core = 0;
  double device = 0, host = 0;
  std::vector<ModelNode> models;
  double tensors = 0, constants = 0, code = 0, runtime = 0, scratch = 0;
};

struct DeviceNode {
  int device = 0;
  double device_bytes = 0, host_bytes = 0;
  std::map<std::uint32_t, CoreNode> cores;
};

std::map<int, DeviceNode> Collect(const Model& model, std::uint32_t pid) {
  std::map<int, DeviceNode> out;
  const std::uint32_t per = CoresPerDevice(model.inventory());
  for (const RuntimeView& r : model.runtimes()) {
    if (pid != 0 && r.report.pid() != pid) continue;
    const v1::MemoryUsed& m = r.report.memory_used();
    for (const v1::CoreMemory& c : m.cores()) {
      DeviceNode& d = out[static_cast<int>(c.index() / per)];
      d.device = static_cast<int>(c.index() / per);
      CoreNode& core = d.cores[c.index()];
      core.core = c.index();
      const double total =
          static_cast<double>(c.constants() + c.model_code() + c.model_shared_scratchpad() +
                              c.runtime_memory() + c.tensors() + c.other());
      core.device += total;
      d.device_bytes += total;
      core.tensors += static_cast<double>(c.tensors());
      core.constants += static_cast<double>(c.constants());
      core.code += static_cast<double>(c.model_code());
      core.runtime += static_cast<double>(c.runtime_memory());
      core.scratch += static_cast<double>(c.model_shared_scratchpad());
    }
    for (const v1::LoadedModel& lm : m.loaded_models()) {
      for (const v1::Subgraph& sg : lm.subgraphs()) {
        const std::uint32_t core_index = sg.neuron_device_index() * per + sg.neuroncore_index();
        DeviceNode& d = out[static_cast<int>(sg.neuron_device_index())];
        d.device = static_cast<int>(sg.neuron_device_index());
        CoreNode& core = d.cores[core_index];
        core.core = core_index;
        core.host += static_cast<double>(sg.host_bytes());
        d.host_bytes += static_cast<double>(sg.host_bytes());
        ModelNode mn;
        mn.id = "m" + std::to_string(lm.model_id()) + "." + std::to_string(r.report.pid());
        mn.name = lm.name();
        mn.model_id = lm.model_id();
        mn.device = static_cast<double>(sg.device_bytes());
        mn.host = static_cast<double>(sg.host_bytes());
        mn.categories = {{"Tensors", static_cast<double>(sg.device().tensors())},
                         {"Constants", static_cast<double>(sg.device().constants())},
                         {"Model Code", static_cast<double>(sg.device().model_code())},
                         {"Runtime Memory", static_cast<double>(sg.device().runtime_memory())}};
        core.models.push_back(std::move(mn));
      }
    }
  }
  return out;
}

std::string DeviceName(int d) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "ND%2d", d);
  return buf;
}

template <typename Fn>
void Walk(const Model& model, const ViewState& view, bool all, Fn&& emit) {
  for (const auto& [d, dev] : Collect(model, TabPid(model, view.tab))) {
    const std::string did = "d" + std::to_string(d);
    const bool dopen = all || view.expanded.count(did) > 0;
    emit(TreeRow{did, 0, true, dopen, DeviceName(d), "", dev.device_bytes, dev.host_bytes});
    if (!dopen) continue;
    for (const auto& [c, core] : dev.cores) {
      const std::string cid = did + "/c" + std::to_string(c);
      const bool copen = all || view.expanded.count(cid) > 0;
      emit(TreeRow{cid, 1, true, copen, "NC " + std::to_string(c), "", core.device, core.host});
      if (!copen) continue;
      for (const ModelNode& m : core.models) {
        const std::string mid = cid + "/" + m.id;
        const bool mopen = all || view.expanded.count(mid) > 0;
        emit(TreeRow{mid, 2, true, mopen, m.name, std::to_string(m.model_id), m.device, m.host});
        if (!mopen) continue;
        for (const Category& cat : m.categories) {
          emit(TreeRow{mid + "/=" + cat.name, 3, false, false, cat.name, "", cat.bytes, 0});
        }
      }
      const Category rest[] = {{"Tensors", core.tensors},
                               {"Constants", core.constants},
                               {"Model Code", core.code},
                               {"Runtime Memory", core.runtime},
                               {"Model Scratchpad", core.scratch}};
      for (const Category& cat : rest)
        emit(TreeRow{cid + "/=" + cat.name, 2, false, false, cat.name, "", cat.bytes, 0});
    }
  }
}

}  // namespace

std::uint32_t TabPid(const Model& model, int tab) {
  if (tab <= 0) return 0;
  int i = 1;
  for (const RuntimeView& r : model.runtimes()) {
    if (i++ == tab) return r.report.pid();
  }
  return 0;
}

int TabCount(const Model& model) { return 1 + static_cast<int>(model.runtimes().size()); }

std::vector<TreeRow> BuildTree(const Model& model, const ViewState& view) {
  std::vector<TreeRow> rows;
  Walk(model, view, false, [&](TreeRow r) { rows.push_back(std::move(r)); });
  return rows;
}

std::vector<std::string> AllTreeNodes(const Model& model, const ViewState& view) {
  std::vector<std::string> ids;
  Walk(model, view, true, [&](const TreeRow& r) {
    if (r.expandable) ids.push_back(r.id);
  });
  return ids;
}

int TreeRows(const Ctx& ctx) {
  return 1 + std::max<int>(1, static_cast<int>(BuildTree(ctx.model, ctx.view).size()));
}

void DrawTree(Ctx& ctx, int y, int rows) {
  Canvas& c = ctx.canvas;
  const int id_col = std::max(20, c.width() - 40);
  const int dev_col = id_col + 10;
  const int host_col = dev_col + 16;
  Header(ctx, y, "Memory Usage Details");
  Text(c, id_col, y, c.width() - id_col, "Model ID", Role::kSection);
  Text(c, dev_col, y, c.width() - dev_col, "Device Memory", Role::kSection);
  Text(c, host_col, y, c.width() - host_col, "Host Memory", Role::kSection);
  const std::vector<TreeRow> tree = BuildTree(ctx.model, ctx.view);
  const int page = std::max(1, rows - 1);
  ctx.frame.tree_page = page;
  if (tree.empty()) {
    if (rows > 1) Text(c, 1, y + 1, c.width() - 1, "no Neuron application memory", Role::kDim);
    return;
  }
  const int cursor = std::clamp(ctx.view.tree_cursor, 0, static_cast<int>(tree.size()) - 1);
  const int first =
      std::clamp(cursor - page + 1, 0, std::max(0, static_cast<int>(tree.size()) - page));
  for (int i = 0; i < page && first + i < static_cast<int>(tree.size()); ++i) {
    const TreeRow& r = tree[static_cast<std::size_t>(first + i)];
    const int row = y + 1 + i;
    const bool selected = first + i == cursor;
    const Role role = selected ? Role::kSelected : (r.expandable ? Role::kNormal : Role::kDim);
    std::string label = std::string(static_cast<std::size_t>(r.depth * 3), ' ');
    if (r.expandable) label += r.expanded ? "[-] " : "[+] ";
    label += r.label;
    if (selected)
      c.Put(0, row, std::string(static_cast<std::size_t>(c.width()), ' '), Role::kSelected);
    Text(c, 0, row, id_col - 1, label, role);
    Text(c, id_col, row, 9, r.model_id, selected ? role : Role::kDim);
    Text(c, dev_col, row, 15, Bytes(r.device_bytes), selected ? role : Role::kValue);
    if (r.expandable)
      Text(c, host_col, row, c.width() - host_col, Bytes(r.host_bytes),
           selected ? role : Role::kValue);
    ctx.frame.hits.push_back({Hit::Kind::kTreeRow, row, 0, c.width(), first + i});
  }
}

}  // namespace neuronmon::tui
