// The details pane: the selected node's attributes, dependencies and dependants.
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app_impl.h"

namespace chakra_web {

void App::Impl::draw_details() {
  RankCache* c = cache();
  if (!c || !selected) return;
  const chakra::Trace& t = c->rank->trace;
  uint32_t n = *selected;
  if (ImGui::SmallButton("close")) {
    selected.reset();
    return;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("rank %u, position %u", rank, n);
  ImGui::TextWrapped("%s", std::string(t.name(n)).c_str());
  ImGui::Separator();
  ImGui::Text("id             %llu", static_cast<unsigned long long>(t.id(n)));
  ImGui::Text("type           %s", std::string(chakra::node_type_name(t.type(n))).c_str());
  ImGui::Text("start_time     %llu us", static_cast<unsigned long long>(t.start_time_micros(n)));
  ImGui::Text("duration       %llu us", static_cast<unsigned long long>(t.duration_micros(n)));
  if (auto span = simulated_span(n)) {
    const auto [from, to] = *span;
    ImGui::TextDisabled("simulated in run %d", shown_run);
    ImGui::Text("start          %s", format_duration(from, "ns").c_str());
    ImGui::Text("end            %s", format_duration(to, "ns").c_str());
    ImGui::Text("took           %s", format_duration(to - from, "ns").c_str());
  }
  auto io = [&](const char* label, bool has, const chakra::IoStrings& s) {
    if (!has) return;
    ImGui::TextDisabled("%s", label);
    ImGui::TextWrapped("values %s", std::string(t.str(s.values)).c_str());
    ImGui::TextWrapped("shapes %s", std::string(t.str(s.shapes)).c_str());
    ImGui::TextWrapped("types  %s", std::string(t.str(s.types)).c_str());
  };
  io("inputs", t.has_inputs(n), t.inputs(n));
  io("outputs", t.has_outputs(n), t.outputs(n));
  if (ImGui::CollapsingHeader("attributes", ImGuiTreeNodeFlags_DefaultOpen)) {
    for (uint32_t a = t.attr_begin(n); a < t.attr_end(n); ++a) {
      chakra::AttrView v = t.attr(a);
      std::string text = chakra::attr_value_text(t, v);
      // The numbers people read by name: a collective's type and its size.
      if (v.name() == "comm_type")
        if (auto type = v.as_int64(); type && !chakra::comm_type_name(*type).empty())
          text += " (" + std::string(chakra::comm_type_name(*type)) + ")";
      if (v.name() == "comm_size" || v.name() == "tensor_size")
        if (auto bytes = v.as_uint64(); bytes && *bytes >= 1024) text += " (" + chakra::format_bytes(*bytes) + ")";
      ImGui::TextWrapped("%s = %s", std::string(v.name()).c_str(), text.c_str());
    }
  }
  auto links = [&](const char* title, auto&& ids_or_positions, bool are_ids) {
    if (!ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_DefaultOpen)) return;
    int shown = 0;
    if (std::size(ids_or_positions) == 0) ImGui::TextDisabled("none");
    for (auto v : ids_or_positions) {
      std::optional<uint32_t> pos = are_ids ? c->index->find(v) : std::optional<uint32_t>(static_cast<uint32_t>(v));
      uint64_t id = are_ids ? v : t.id(static_cast<uint32_t>(v));
      if (++shown > 200) {
        ImGui::TextDisabled("... %zu in all", std::size(ids_or_positions));
        break;
      }
      if (!pos) {
        ImGui::TextColored(kErrorColour, "%llu (not in the trace)", static_cast<unsigned long long>(id));
        continue;
      }
      char label[160];
      std::snprintf(label, sizeof label, "%llu %.100s##%s%u", static_cast<unsigned long long>(id),
                    std::string(t.name(*pos)).c_str(), title, *pos);
      if (ImGui::SmallButton(label)) selected = *pos;
    }
  };
  // Measured PyTorch traces: a kernel's host op, a host op's kernels, as a profiler names them.
  if (auto peers = chakra::launch_peers(t, c->deps, c->dependants, n); !peers.empty())
    links(t.find_attr(n, "is_cpu_op")->as_bool().value_or(false) ? "kernels it launched" : "host op (launched it)",
          peers, false);
  links("data deps", t.data_deps(n), true);
  links("ctrl deps", t.ctrl_deps(n), true);
  links("dependants", c->dependants.deps(n), false);
}

}  // namespace chakra_web
