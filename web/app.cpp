#include "app.h"

#include <chrono>
#include <exception>

#include <imgui.h>

#include "chakra/et_io.h"
#include "chakra/io.h"
#include "chakra/json_writer.h"
#include "chakra/schema.h"
#include "chakra/text.h"

namespace chakra_web {

bool App::load(std::span<const uint8_t> bytes, const std::string& name) {
  auto start = std::chrono::steady_clock::now();
  try {
    auto file = std::make_unique<LoadedTrace>();
    file->name = name;
    file->bytes = bytes.size();
    file->trace = chakra::read_et(chakra::memory_input(bytes, name));
    file->summary = chakra::summarize(file->trace);
    file->report = chakra::validate(file->trace);
    file->load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    files_.push_back(std::move(file));
    last_error_.clear();
    return true;
  } catch (const std::exception& e) {
    last_error_ = e.what();
    return false;
  }
}

void App::draw() {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("chakrakit", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings);
  ImGui::Text("chakrakit %s", CHAKRA_VERSION);
  ImGui::SameLine();
  ImGui::TextDisabled("- Chakra execution traces, decoded in your browser; nothing is uploaded.");
  ImGui::TextUnformatted("Drop .et files (plain or gzip) anywhere on the page, or use the Open button above.");
  if (!last_error_.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "Error: %s", last_error_.c_str());
  ImGui::Separator();
  if (files_.empty()) ImGui::TextDisabled("No trace loaded.");
  for (const auto& f : files_) draw_file(*f);
  ImGui::End();
}

void App::draw_file(const LoadedTrace& t) {
  const chakra::TraceSummary& s = t.summary;
  std::string header = t.name + "  (" + chakra::format_bytes(t.bytes) + ", " + std::to_string(s.nodes) + " nodes)";
  if (!ImGui::CollapsingHeader(header.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) return;
  ImGui::PushID(&t);
  std::string metadata = "no GlobalMetadata record (older ASTRA-sim trace)";
  if (s.has_metadata) metadata = "version \"" + s.version + "\"" + (s.schema.empty() ? "" : ", schema \"" + s.schema + "\"");
  ImGui::Text("metadata: %s   decoded in %.1f ms", metadata.c_str(), t.load_ms);
  ImGui::Text("dependencies: %llu data, %llu control   total duration: %llu us",
              static_cast<unsigned long long>(s.data_deps), static_cast<unsigned long long>(s.ctrl_deps),
              static_cast<unsigned long long>(s.total_duration_micros));
  if (ImGui::BeginTable("types", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("node type");
    ImGui::TableSetupColumn("nodes");
    ImGui::TableSetupColumn("duration (us)");
    ImGui::TableHeadersRow();
    for (int32_t type = 0; type < chakra::kNodeTypeCount; ++type) {
      if (!s.by_type[type].nodes) continue;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(std::string(chakra::node_type_name(type)).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%llu", static_cast<unsigned long long>(s.by_type[type].nodes));
      ImGui::TableNextColumn();
      ImGui::Text("%llu", static_cast<unsigned long long>(s.by_type[type].duration_micros));
    }
    ImGui::EndTable();
  }
  for (const auto& [type, c] : s.collectives) {
    std::string name(chakra::comm_type_name(type));
    ImGui::BulletText("%s: %llu collectives, %s", name.empty() ? "(unknown comm_type)" : name.c_str(),
                      static_cast<unsigned long long>(c.count), chakra::format_bytes(c.bytes).c_str());
  }
  const chakra::ValidationReport& r = t.report;
  ImVec4 colour = r.errors ? ImVec4(1, 0.4f, 0.4f, 1) : r.warnings ? ImVec4(1, 0.8f, 0.3f, 1) : ImVec4(0.4f, 1, 0.5f, 1);
  ImGui::TextColored(colour, "validate: %llu errors, %llu warnings", static_cast<unsigned long long>(r.errors),
                     static_cast<unsigned long long>(r.warnings));
  for (const auto& [code, count] : r.counts)
    ImGui::BulletText("%s x %llu", code.c_str(), static_cast<unsigned long long>(count));
  ImGui::PopID();
}

std::string App::status_json() const {
  chakra::StringSink sink;
  chakra::JsonWriter w(sink);
  w.begin_object();
  w.key("version").value(CHAKRA_VERSION);
  w.key("error").value(last_error_);
  w.key("files").begin_array();
  for (const auto& f : files_) {
    w.begin_object();
    w.key("name").value(f->name);
    w.key("bytes").value_uint(f->bytes);
    w.key("errors").value_uint(f->report.errors);
    w.key("warnings").value_uint(f->report.warnings);
    w.key("summary");
    chakra::write_summary_json(f->summary, w);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.flush();
  return sink.out;
}

}  // namespace chakra_web
