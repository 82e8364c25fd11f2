// Byte-level input and output: files, memory, transparent gzip, atomic output files.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace chakra {

// Guards applied to every input.
struct InputLimits {
  // Decompressed bytes may exceed this multiple of the compressed bytes read so far only while
  // fewer than `gzip_ratio_floor` bytes have been produced. Real traces compress well under
  // 100:1; deflate tops out near 1032:1, so only constant filler trips this.
  double max_gzip_ratio = 1000;
  uint64_t gzip_ratio_floor = uint64_t{4} << 20;
  // Upper bound on (decompressed) input bytes; 0 = none.
  uint64_t max_bytes = 0;
};

// Sequential reader. Errors (I/O, corrupt gzip, a limit exceeded) throw chakra::Error with the
// input's name in the message.
class ByteSource {
 public:
  explicit ByteSource(std::string name) : name_(std::move(name)) {}
  virtual ~ByteSource() = default;
  // Reads up to n bytes into dst; returns 0 only at the end of the input.
  virtual size_t read(uint8_t* dst, size_t n) = 0;
  // Position in the underlying (possibly compressed) bytes and their total size (0 if
  // unknown), for progress reporting.
  virtual uint64_t raw_position() const = 0;
  virtual uint64_t raw_size() const = 0;
  virtual bool compressed() const { return false; }
  // Zero-copy reading, where the bytes can be shown in place (a regular file, mapped; bytes in
  // memory): sets `out` to bytes [offset, offset + n) counted from the current read position,
  // fewer only at the end of the input, valid until the next map() or the source's end; reading
  // and mapping are not mixed. False (and nothing changed) where the source cannot: a pipe,
  // gzip, or a failed mapping; then read().
  virtual bool map(uint64_t offset, size_t n, std::string_view& out) {
    (void)offset, (void)n, (void)out;
    return false;
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// Whether `bytes` start with gzip's magic number (how every reader here recognises gzip).
bool is_gzip(std::span<const uint8_t> bytes);

// Opens a file for reading; gzip is recognised by its magic bytes and decompressed on the fly.
// A directory, a missing file or an unreadable one is an error naming the path.
std::unique_ptr<ByteSource> open_input(const std::string& path, const InputLimits& limits = {});
// The same over bytes already in memory (which must outlive the source). `name` is used in
// error messages.
std::unique_ptr<ByteSource> memory_input(std::span<const uint8_t> bytes, std::string name,
                                         const InputLimits& limits = {});
// A file that arrives in pieces (a page reading it in slices), read as it comes: read() gives
// the bytes received up to the readable limit and 0 past it, so a reader must be told how far
// it may go (set_readable) and not take a 0 for the end until complete(). Pieces are dropped
// once read: only what is received and not yet read is held.
class PieceSource : public ByteSource {
 public:
  PieceSource(std::string name, uint64_t total_bytes) : ByteSource(std::move(name)), total_(total_bytes) {}

  // The next bytes of the file; throws chakra::Error when they would run past its size.
  void add(std::span<const uint8_t> piece);
  // read() stops at this stream offset (clamped to what has been received).
  void set_readable(uint64_t offset) { readable_ = offset; }
  // Copies bytes [offset, offset + n) of the stream into out, where they are received and not
  // yet read; false otherwise.
  bool peek(uint64_t offset, uint8_t* out, size_t n) const;

  uint64_t received() const { return received_; }
  bool complete() const { return received_ == total_; }
  uint64_t held() const { return received_ - position_; }  // received, not yet read

  size_t read(uint8_t* dst, size_t n) override;
  uint64_t raw_position() const override { return position_; }
  uint64_t raw_size() const override { return total_; }

 private:
  std::deque<std::vector<uint8_t>> pieces_;  // pieces_.front() begins at front_offset_
  uint64_t front_offset_ = 0;
  uint64_t total_, received_ = 0, position_ = 0, readable_ = 0;
};

// Reads everything that is left.
std::string read_all(ByteSource& in);
// Convenience: whole (decompressed) content of a file.
std::string read_file(const std::string& path, const InputLimits& limits = {});

// Sequential writer.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(const void* data, size_t n) = 0;
  void write(std::string_view s) { write(s.data(), s.size()); }
};

class StringSink : public ByteSink {
 public:
  void write(const void* data, size_t n) override { out.append(static_cast<const char*>(data), n); }
  using ByteSink::write;
  std::string out;
};

enum class Compression { Auto, None, Gzip };  // Auto: gzip when the file name ends in ".gz"

// Output to a file that appears under its name only when complete: bytes go to a temporary
// file in the same directory, renamed over `path` by commit(). If commit() is never reached
// (error, exception, Ctrl-C) the destructor removes the temporary file and `path` is untouched.
// The path "-" writes to standard output instead (not atomic).
class OutputFile : public ByteSink {
 public:
  explicit OutputFile(std::string path, Compression compression = Compression::Auto);
  ~OutputFile() override;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, size_t n) override;
  using ByteSink::write;
  // Completes the bytes and closes the temporary file, freeing its buffers, without moving it
  // into place; commit() then only renames. Lets a command write many files (one per NPU) and
  // publish them only when all are complete.
  void finish();
  void commit();
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::string path_;
  std::unique_ptr<Impl> impl_;
};

bool ends_with(std::string_view s, std::string_view suffix);

// The rank of a per-rank file from its name (the folder part is ignored): the number after
// "rank" or "worker" ("rank3.json", "worker_3.pt.trace.json"), else the number just before the
// extensions after a '.', '_' or '-' ("prefix.3.et.gz", "host_3.json"). Numbers of more than 6
// digits (timestamps, pids) and numbers that end a version or a date ("et_0.0.4.json",
// "trace.2023-07.json") are not ranks.
std::optional<uint32_t> rank_from_file_name(std::string_view path);

// A ZIP archive (PKWARE APPNOTE 6.3) of the files, stored uncompressed (.et and gzip bytes gain
// little from deflate): what the web page downloads when it hands over several files at once.
// Throws chakra::Error past ZIP's 4 GiB and 65535-file limits (no ZIP64).
std::string zip_store(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace chakra
