// The syntax tree of a StableHLO text file, as far as a cost model needs it: modules, functions,
// regions, blocks and ops with their results, operands, types, raw attribute tokens and nested
// regions. Private to the core; stablehlo.h is the public face.
//
// The tree points into the token vector and the source text (string_views), so a Program owns
// both and must outlive every view taken from it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/stablehlo/stablehlo.h"

namespace chakra::stablehlo::ir {

enum class Tok : uint8_t {
  End,
  Value,      // %name, %0, %0#1 (the #n is part of the text)
  Block,      // ^bb0
  Symbol,     // @name or @"name"
  Hash,       // #dialect.attr
  Type,       // tensor<...>, tuple<...>, !dialect.type<...>, complex<...> (whole text)
  Ident,      // bare word, may contain dots: stablehlo.add, dense, x, f32
  Number,     // -1, 2.5e-3, 0x7FC00000
  String,     // "..." (text includes the quotes)
  Arrow,      // ->
  Punct,      // one of ( ) [ ] { } < > , : = * ? + |
  Separator,  // a `// -----` line between modules
};

struct Token {
  Tok kind;
  bool line_start;  // first token on its line
  uint32_t line, col;
  std::string_view text;
  bool is(char c) const { return kind == Tok::Punct && text[0] == c; }
  bool is(std::string_view word) const { return kind == Tok::Ident && text == word; }
};

struct Region;

struct Op {
  std::string_view name;                  // "stablehlo.add", "func.call", "call", "return"
  std::vector<std::string_view> results;  // one entry per result value: "%0", or "%0#1" for %0:2
  std::vector<std::string_view> operands;
  std::vector<TensorType> operand_types;  // from a functional signature, else empty
  std::vector<TensorType> result_types;
  std::string_view callee;                // @f of call / custom_call target, without '@'
  uint32_t attr_begin = 0, attr_end = 0;  // token range of attributes and properties
  std::vector<Region> regions;
  uint32_t line = 0, col = 0;
};

struct Block {
  std::vector<std::string_view> args;
  std::vector<TensorType> arg_types;
  std::vector<Op> ops;
};

struct Region {
  std::vector<Block> blocks;
};

struct Func {
  std::string_view name;  // without '@'
  bool is_public = true;
  Block body;  // params are body.args
  bool has_body = false;
  uint32_t line = 0;
};

struct Module {
  std::string_view name;
  int64_t num_partitions = 1, num_replicas = 1;
  bool declares_devices = false;  // mhlo.num_partitions or mhlo.num_replicas present
  std::vector<Func> funcs;
  uint32_t line = 0;
};

struct File {
  std::string name;
  std::string text;
  std::vector<Token> tokens;
  std::vector<Module> modules;
  std::vector<std::unique_ptr<std::string>> owned_names;  // "%0#1" for results of "%0:2"
};

// Tokenizes and parses `text`. Throws chakra::Error "NAME:LINE:COL: what" on malformed input.
std::unique_ptr<File> parse(std::string text, const std::string& name);

// Parses a type token's text ("tensor<2x3xf32>", "tuple<...>", "!stablehlo.token", "i64").
TensorType parse_type(std::string_view text);

// Attribute helpers over an op's attribute tokens: the token index just after `key =` (or
// `key:`), or 0 when the key is absent.
uint32_t find_attr(const File& f, const Op& op, std::string_view key);
bool has_word(const File& f, const Op& op, std::string_view word);
// Parses `[1, 2]`, `array<i64: 1, 2>` or a dense literal of integers starting at token `at`;
// nested lists are flattened.
std::vector<int64_t> int_list(const File& f, uint32_t at);
// Dims of the first type among the op's attribute tokens from `at` on: the shape of a dense
// literal (`dense<...> : tensor<2x4xi64>`); empty when there is none or `at` is 0.
std::vector<int64_t> literal_shape(const File& f, const Op& op, uint32_t at);

}  // namespace chakra::stablehlo::ir
