// A small YAML subset, read into JSON values (keys in the order written): what configuration files
// written by hand use.
// Block mappings and sequences by indentation ("key: value", "- item", "- key: value" opening a
// mapping in a list), flow sequences and mappings on one line ([a, b], {k: v, k2: [1, 2]}),
// comments (#), and scalars: integers, decimals, true/false, null/~, and strings (plain, or
// quoted with '' or "" and the JSON escapes). Not supported, and refused with the line number:
// anchors and aliases, tags, multi-line scalars (| and >), several documents, tabs for indentation.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace chakra {

// Throws chakra::Error "NAME: line L: what is wrong" for what it cannot read.
nlohmann::ordered_json parse_yaml(std::string_view text, const std::string& name);

}  // namespace chakra
