// Reading and writing Chakra .et files.
//
// Format: a sequence of records, each a protobuf message preceded by its byte length as a
// varint; record 0 is a GlobalMetadata, every later record a Node. Older ASTRA-sim traces have
// no GlobalMetadata record; the reader recognises this from the content of record 0. Files may
// be gzip-compressed (recognised by their magic bytes).
//
// Reading keeps everything needed to write the same bytes back: write_et(read_et(f)) == f for
// every file written by the protobuf runtimes (which write canonical encodings).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "chakra/format/io.h"
#include "chakra/support/progress.h"
#include "chakra/trace/trace.h"

namespace chakra {

enum class MetadataMode {
  Auto,     // decide from record 0's fields (a Node starts with a varint id or has fields 3..10)
  Present,  // record 0 is a GlobalMetadata
  Absent,   // every record is a Node
};

struct ReadOptions {
  MetadataMode metadata = MetadataMode::Auto;
  InputLimits input;  // used when read_et() opens the file; pass it to memory_input() yourself
  uint64_t max_record_bytes = uint64_t{1} << 30;  // larger length prefixes are errors
  uint64_t max_nodes = 0;                         // 0 = no limit
  Progress* progress = nullptr;
};

// Streaming reader: yields one node at a time, holding only the current record in memory.
// Strings are interned into the StringPool of the Trace passed to the calls (which may be a
// Trace used only as a string table). Errors throw chakra::Error naming the input and the
// byte offset of the bad record, e.g. "x.et: record 12 at byte 4096: ...".
class EtReader {
 public:
  EtReader(std::unique_ptr<ByteSource> in, const ReadOptions& options = {});
  ~EtReader();
  EtReader(const EtReader&) = delete;
  EtReader& operator=(const EtReader&) = delete;

  // Reads record 0 and, if it is a GlobalMetadata, stores it into `trace`. Called once, before
  // the first next_node(); next_node() calls it itself if needed. Throws for an empty input.
  void read_metadata(Trace& trace);
  // Fills `node` with the next node; false at the end of the input.
  bool next_node(Trace& strings, NodeDraft& node);

  bool has_metadata() const;
  uint64_t records_read() const;
  // Offset of the next record in the (decompressed) byte stream.
  uint64_t offset() const;
  const std::string& name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whole-file reading.
Trace read_et(const std::string& path, const ReadOptions& options = {});
Trace read_et(std::unique_ptr<ByteSource> in, const ReadOptions& options = {});

// A scalar attribute value as encoded: a string, or an integer (int32_val sign-extended, int64_val).
using EncodedScalar = std::variant<int64_t, std::string_view>;
// Whether two uncompressed encoded traces are the same record for record, byte for byte, but for
// the values of node attributes named in `paired` (one string or int32/int64 value each, the
// attribute otherwise byte-identical), each such pair handed to `pair` (which may refuse it).
// False also where it cannot tell this way (gzip, other encodings, bad framing): decode both
// and compare (same_up_to_node_ids) to know. Spares decoding most traces of a many-rank step,
// whose ranks differ only in their groups and peers: records without those are compared whole.
bool same_records_but_paired(
    std::string_view a, std::string_view b, std::span<const std::string_view> paired,
    const std::function<bool(std::string_view name, const EncodedScalar& a, const EncodedScalar& b)>& pair);

struct WriteOptions {
  Compression compression = Compression::Auto;
  Progress* progress = nullptr;
};

// Serialises the trace in canonical protobuf encoding (fields in number order, packed
// dependency lists, oneof members written even when default, unknown fields last).
void write_et(const Trace& trace, ByteSink& out, Progress* progress = nullptr);
// Atomic file write (see OutputFile); gzip when the name ends in ".gz" unless told otherwise.
void write_et(const Trace& trace, const std::string& path, const WriteOptions& options = {});
std::string encode_et(const Trace& trace);

}  // namespace chakra
