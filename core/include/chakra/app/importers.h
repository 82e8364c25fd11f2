// Every kind of file chakrakit opens, in one table (importers.def): how a file is recognised from
// its name and first bytes, the evidence it was known by, what the kind is called, and how a file
// of it is opened into a workspace. The CLI's commands, the workspace (and through it the page)
// all ask this table; none decides a file's kind on its own. A new kind: its sniff and open
// functions, and its line in importers.def; core/docs/architecture.md has the recipe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace chakra {

enum class InputKind {
#define CHAKRA_IMPORTER(kind, function, sniff_order, name, what) kind,
#include "chakra/app/importers.def"
#undef CHAKRA_IMPORTER
  Unknown
};

class Workspace;
class WorkspaceFile;

struct FileImporter {
  InputKind kind;
  const char* name;  // "Kineto trace"
  const char* what;  // "a Kineto (PyTorch profiler) trace", for messages
  int sniff_order;   // asked in this order
  // The evidence that a file is of this kind ("traceEvents"; "the name ends in .et"), "" when it
  // is not. `head`: the first 64 KiB of the content, inflated when gzip.
  std::string (*sniff)(std::string_view file_name, std::string_view head);
  // Puts a file of this kind that arrived whole into the workspace; returns a line saying what it
  // became. Throws chakra::Error naming the file for malformed content, the workspace unchanged.
  std::string (*open)(Workspace& workspace, WorkspaceFile& file);
};

// The importers in the order they are asked (sniff_order: the first whose sniff answers wins).
std::span<const FileImporter> importers();
const FileImporter& importer(InputKind kind);
const char* input_kind_name(InputKind kind);
// "Chakra .et, Chakra JSON, PyTorch host ET, ...": what chakrakit opens, for messages refusing a file.
std::string importer_names();

// The first 64 KiB of `bytes`, inflated when gzip (a corrupt stream gives what could be read).
std::string input_head(std::span<const uint8_t> bytes, const std::string& name);

// A file's kind and the evidence it was known by.
struct SniffedInput {
  InputKind kind = InputKind::Unknown;
  std::string evidence;
};
SniffedInput sniff_input(std::string_view name, std::span<const uint8_t> bytes);
InputKind detect_input_kind(std::string_view name, std::span<const uint8_t> bytes);

// A file's kind and what it is in words, for messages that refuse it: "an ASTRA-sim network
// config (YAML)", "a PNG image", "text of no kind chakrakit reads". `opaque`: binary data of no
// known kind, which may be a damaged Chakra trace under another name (the .et reader then says
// where it fails).
struct InputDescription {
  InputKind kind = InputKind::Unknown;
  std::string what;
  std::string evidence;
  bool opaque = false;
};
InputDescription describe_input(std::string_view name, std::span<const uint8_t> bytes);

}  // namespace chakra
