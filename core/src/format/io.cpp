#include "chakra/format/io.h"

#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "chakra/support/error.h"

namespace chakra {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

namespace {

std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

constexpr uint8_t kGzip0 = 0x1f, kGzip1 = 0x8b;

class FileSource : public ByteSource {
 public:
  FileSource(std::string path, int fd, uint64_t size, bool regular)
      : ByteSource(std::move(path)), fd_(fd), size_(size), regular_(regular) {}
  ~FileSource() override {
    unmap();
    ::close(fd_);
  }

  // A window of a regular file mapped read-only, the previous one unmapped: the bytes are not
  // copied out of the page cache (the kernel's copy was a tenth of a conversion's time), and
  // only one window's pages count against the process. (A file cut short by another process
  // while mapped would fault on the lost pages; traces are not rewritten while being read.)
  bool map(uint64_t offset, size_t n, std::string_view& out) override {
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
    if (!regular_) return false;
    const uint64_t at = raw_position() + offset;
    if (at >= size_) {
      unmap();
      out = {};
      return true;
    }
    const uint64_t length = std::min<uint64_t>(n, size_ - at);
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t start = at / page * page;
    void* p =
        ::mmap(nullptr, at - start + length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, static_cast<off_t>(start));
    if (p == MAP_FAILED) return false;
    unmap();
    mapped_ = p;
    mapped_bytes_ = at - start + length;
    out = std::string_view(static_cast<const char*>(p) + (at - start), length);
    return true;
#else
    (void)offset, (void)n, (void)out;
    return false;
#endif
  }

  // Reads the first bytes without consuming them (works on pipes too).
  std::span<const uint8_t> peek(size_t n) {
    while (prefix_.size() < n) {
      uint8_t b[16];
      size_t got = raw_read(b, n - prefix_.size());
      if (got == 0) break;
      prefix_.insert(prefix_.end(), b, b + got);
    }
    return {prefix_.data(), std::min(n, prefix_.size())};
  }

  size_t read(uint8_t* dst, size_t n) override {
    if (prefix_pos_ < prefix_.size()) {
      size_t k = std::min(n, prefix_.size() - prefix_pos_);
      std::memcpy(dst, prefix_.data() + prefix_pos_, k);
      prefix_pos_ += k;
      return k;
    }
    return raw_read(dst, n);
  }
  uint64_t raw_position() const override { return pos_ - (prefix_.size() - prefix_pos_); }
  uint64_t raw_size() const override { return size_; }

 private:
  size_t raw_read(uint8_t* dst, size_t n) {
    for (;;) {
      ssize_t got = ::read(fd_, dst, n);
      if (got >= 0) {
        pos_ += static_cast<uint64_t>(got);
        return static_cast<size_t>(got);
      }
      if (errno != EINTR) throw Error(sys_error(name() + ": read failed"));
    }
  }

  void unmap() {
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
    if (mapped_) ::munmap(mapped_, mapped_bytes_);
    mapped_ = nullptr;
#endif
  }

  int fd_;
  uint64_t size_;
  [[maybe_unused]] bool regular_;  // (no mapping in wasm)
  uint64_t pos_ = 0;
  std::vector<uint8_t> prefix_;
  size_t prefix_pos_ = 0;
  [[maybe_unused]] void* mapped_ = nullptr;
  [[maybe_unused]] size_t mapped_bytes_ = 0;
};

class MemorySource : public ByteSource {
 public:
  MemorySource(std::span<const uint8_t> bytes, std::string name) : ByteSource(std::move(name)), bytes_(bytes) {}
  size_t read(uint8_t* dst, size_t n) override {
    size_t k = std::min(n, bytes_.size() - pos_);
    if (k) std::memcpy(dst, bytes_.data() + pos_, k);  // an empty span's data() may be null
    pos_ += k;
    return k;
  }
  uint64_t raw_position() const override { return pos_; }
  uint64_t raw_size() const override { return bytes_.size(); }
  bool map(uint64_t offset, size_t n, std::string_view& out) override {
    const size_t at = static_cast<size_t>(std::min<uint64_t>(pos_ + offset, bytes_.size()));
    out = std::string_view(reinterpret_cast<const char*>(bytes_.data()) + at, std::min(n, bytes_.size() - at));
    return true;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

class GzipSource : public ByteSource {
 public:
  GzipSource(std::unique_ptr<ByteSource> raw, const InputLimits& limits)
      : ByteSource(raw->name()), raw_(std::move(raw)), limits_(limits), in_(256 * 1024) {
    std::memset(&z_, 0, sizeof(z_));
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) throw Error(name() + ": cannot start gzip decoder");
  }
  ~GzipSource() override { inflateEnd(&z_); }

  size_t read(uint8_t* dst, size_t n) override {
    if (n == 0) return 0;
    z_.next_out = dst;
    z_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    while (z_.avail_out == static_cast<uInt>(std::min<size_t>(n, 1u << 30))) {
      if (z_.avail_in == 0) {
        size_t got = raw_->read(in_.data(), in_.size());
        if (got == 0) {
          if (in_member_) throw Error(name() + ": gzip data ends early (truncated file?)");
          break;
        }
        z_.next_in = in_.data();
        z_.avail_in = static_cast<uInt>(got);
        compressed_ += got;
      }
      if (!in_member_) {
        // Another gzip member may follow the first one (as `cat a.gz b.gz` produces).
        if (z_.next_in[0] != kGzip0) throw Error(name() + ": unexpected bytes after the gzip data");
        inflateReset(&z_);
        in_member_ = true;
      }
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        in_member_ = false;
      } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && z_.avail_in == 0)) {
        throw Error(name() + ": corrupt gzip data near compressed byte " + std::to_string(compressed_ - z_.avail_in) +
                    (z_.msg ? std::string(" (") + z_.msg + ")" : std::string()));
      }
    }
    size_t produced = static_cast<size_t>(z_.next_out - dst);
    total_out_ += produced;
    check_limits();
    return produced;
  }
  uint64_t raw_position() const override { return raw_->raw_position(); }
  uint64_t raw_size() const override { return raw_->raw_size(); }
  bool compressed() const override { return true; }

 private:
  void check_limits() const {
    if (limits_.max_bytes && total_out_ > limits_.max_bytes)
      throw Error(name() + ": decompressed size exceeds the limit of " + std::to_string(limits_.max_bytes) + " bytes");
    if (total_out_ > limits_.gzip_ratio_floor &&
        static_cast<double>(total_out_) > limits_.max_gzip_ratio * static_cast<double>(consumed()))
      throw Error(name() + ": gzip data expands more than " +
                  std::to_string(static_cast<long long>(limits_.max_gzip_ratio)) + "-fold (" +
                  std::to_string(consumed()) + " compressed bytes gave over " + std::to_string(total_out_) +
                  "); refusing a likely gzip bomb");
  }

  uint64_t consumed() const { return compressed_ - z_.avail_in; }  // compressed bytes inflated so far

  std::unique_ptr<ByteSource> raw_;
  InputLimits limits_;
  std::vector<uint8_t> in_;
  z_stream z_;
  bool in_member_ = true;
  uint64_t compressed_ = 0;
  uint64_t total_out_ = 0;
};

// Plain inputs only need the size limit.
class LimitedSource : public ByteSource {
 public:
  LimitedSource(std::unique_ptr<ByteSource> inner, uint64_t max_bytes)
      : ByteSource(inner->name()), inner_(std::move(inner)), max_(max_bytes) {}
  size_t read(uint8_t* dst, size_t n) override {
    size_t got = inner_->read(dst, n);
    total_ += got;
    if (total_ > max_) throw Error(name() + ": input exceeds the limit of " + std::to_string(max_) + " bytes");
    return got;
  }
  uint64_t raw_position() const override { return inner_->raw_position(); }
  uint64_t raw_size() const override { return inner_->raw_size(); }
  bool map(uint64_t offset, size_t n, std::string_view& out) override {
    if (!inner_->map(offset, n, out)) return false;
    if (total_ + offset + out.size() > max_)
      throw Error(name() + ": input exceeds the limit of " + std::to_string(max_) + " bytes");
    return true;
  }

 private:
  std::unique_ptr<ByteSource> inner_;
  uint64_t max_;
  uint64_t total_ = 0;
};

std::unique_ptr<ByteSource> finish_source(std::unique_ptr<ByteSource> src, bool gzip, const InputLimits& limits) {
  if (gzip) return std::make_unique<GzipSource>(std::move(src), limits);
  if (limits.max_bytes) return std::make_unique<LimitedSource>(std::move(src), limits.max_bytes);
  return src;
}

}  // namespace

std::unique_ptr<ByteSource> open_input(const std::string& path, const InputLimits& limits) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(sys_error(path + ": cannot open"));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(sys_error(path + ": cannot stat"));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": is a directory, not a file");
  }
  // Files that say they are empty (/proc) are read, never mapped.
  auto file = std::make_unique<FileSource>(path, fd, S_ISREG(st.st_mode) ? st.st_size : 0,
                                           S_ISREG(st.st_mode) && st.st_size > 0);
  auto head = file->peek(2);
  return finish_source(std::move(file), is_gzip(head), limits);
}

void PieceSource::add(std::span<const uint8_t> piece) {
  if (piece.size() > total_ - received_)
    throw Error(name() + ": received more than its " + std::to_string(total_) + " bytes");
  if (piece.empty()) return;
  pieces_.emplace_back(piece.begin(), piece.end());
  received_ += piece.size();
}

bool PieceSource::peek(uint64_t offset, uint8_t* out, size_t n) const {
  if (offset < position_ || offset + n > received_) return false;
  uint64_t start = front_offset_;
  for (const std::vector<uint8_t>& piece : pieces_) {
    const uint64_t end = start + piece.size();
    while (n > 0 && offset < end) {
      *out++ = piece[static_cast<size_t>(offset - start)];
      ++offset, --n;
    }
    if (n == 0) return true;
    start = end;
  }
  return n == 0;
}

size_t PieceSource::read(uint8_t* dst, size_t n) {
  const uint64_t limit = std::min(readable_, received_);
  size_t done = 0;
  while (done < n && position_ < limit && !pieces_.empty()) {
    const std::vector<uint8_t>& piece = pieces_.front();
    const size_t at = static_cast<size_t>(position_ - front_offset_);
    const size_t k = static_cast<size_t>(std::min<uint64_t>({n - done, piece.size() - at, limit - position_}));
    std::memcpy(dst + done, piece.data() + at, k);
    done += k;
    position_ += k;
    if (position_ == front_offset_ + piece.size()) {  // read to its end: give its memory back
      front_offset_ += piece.size();
      pieces_.pop_front();
    }
  }
  return done;
}

bool is_gzip(std::span<const uint8_t> bytes) { return bytes.size() >= 2 && bytes[0] == kGzip0 && bytes[1] == kGzip1; }

std::unique_ptr<ByteSource> memory_input(std::span<const uint8_t> bytes, std::string name, const InputLimits& limits) {
  return finish_source(std::make_unique<MemorySource>(bytes, std::move(name)), is_gzip(bytes), limits);
}

std::string read_all(ByteSource& in) {
  std::string out;
  // A file whose size is known is read into exactly that much (many small files, one per
  // simulated NPU, must not each cost a megabyte, or several times their size, of zeroed
  // memory; reads may come back short), then a small read on the stack confirms the end.
  // Anything more (a growing file, a compressed one) is read in doubling chunks.
  if (!in.compressed() && in.raw_size() > in.raw_position()) {
    out.resize(static_cast<size_t>(in.raw_size() - in.raw_position()));
    size_t have = 0;
    while (have < out.size()) {
      const size_t got = in.read(reinterpret_cast<uint8_t*>(out.data() + have), out.size() - have);
      if (got == 0) break;
      have += got;
    }
    if (have < out.size()) {
      out.resize(have);
      return out;
    }
    uint8_t probe[4096];
    const size_t more = in.read(probe, sizeof probe);
    if (more == 0) return out;
    out.append(reinterpret_cast<const char*>(probe), more);
  }
  for (size_t chunk = size_t{1} << 16;; chunk = std::min<size_t>(chunk * 2, size_t{1} << 24)) {
    const size_t old = out.size();
    out.resize(old + chunk);
    const size_t got = in.read(reinterpret_cast<uint8_t*>(out.data() + old), chunk);
    out.resize(old + got);
    if (got == 0) break;
  }
  if (out.capacity() > 2 * out.size() + 4096) out.shrink_to_fit();
  return out;
}

std::string read_file(const std::string& path, const InputLimits& limits) {
  return read_all(*open_input(path, limits));
}

// ---------------------------------------------------------------------------------------------

struct OutputFile::Impl {
  int fd = -1;
  bool to_stdout = false;
  bool finished = false;  // all bytes written and the file closed
  bool committed = false;
  std::string tmp_path;
  std::vector<uint8_t> buf;
  bool gzip = false;
  z_stream z{};
  std::vector<uint8_t> zbuf;

  void raw_write(const uint8_t* p, size_t n, const std::string& path) {
    while (n > 0) {
      ssize_t w = ::write(fd, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw Error(sys_error(path + ": write failed"));
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
  }

  // Pushes buffered bytes through the compressor (if any) to the file.
  void drain(const std::string& path, bool finish) {
    if (!gzip) {
      raw_write(buf.data(), buf.size(), path);
      buf.clear();
      return;
    }
    z.next_in = buf.data();
    z.avail_in = static_cast<uInt>(buf.size());
    int rc;
    do {
      z.next_out = zbuf.data();
      z.avail_out = static_cast<uInt>(zbuf.size());
      rc = deflate(&z, finish ? Z_FINISH : Z_NO_FLUSH);
      if (rc == Z_STREAM_ERROR) throw Error(path + ": gzip compression failed");
      raw_write(zbuf.data(), zbuf.size() - z.avail_out, path);
    } while (z.avail_out == 0 || (finish && rc != Z_STREAM_END));
    buf.clear();
  }
};

OutputFile::OutputFile(std::string path, Compression compression)
    : path_(std::move(path)), impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.gzip = compression == Compression::Gzip || (compression == Compression::Auto && ends_with(path_, ".gz"));
  if (path_ == "-") {
    s.to_stdout = true;
    s.fd = STDOUT_FILENO;
  } else {
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; s.fd < 0; ++attempt) {
      s.tmp_path = path_ + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
      s.fd = ::open(s.tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (s.fd < 0 && (errno != EEXIST || attempt > 100)) throw Error(sys_error(path_ + ": cannot create output file"));
    }
  }
  s.buf.reserve(1 << 20);
  if (s.gzip) {
    s.zbuf.resize(1 << 18);
    if (deflateInit2(&s.z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw Error(path_ + ": cannot start gzip compression");
  }
}

OutputFile::~OutputFile() {
  Impl& s = *impl_;
  if (s.gzip) deflateEnd(&s.z);
  if (s.to_stdout) return;
  if (s.fd >= 0) ::close(s.fd);
  if (!s.committed) ::unlink(s.tmp_path.c_str());
}

void OutputFile::write(const void* data, size_t n) {
  Impl& s = *impl_;
  if (s.finished) throw Error(path_ + ": internal error: write after the file was finished");
  const uint8_t* p = static_cast<const uint8_t*>(data);
  // Large blocks (a JsonWriter's whole buffer) go straight through, uncopied.
  if (!s.gzip && s.buf.empty() && n >= (32 << 10)) {
    s.raw_write(p, n, path_);
    return;
  }
  while (n > 0) {
    size_t room = s.buf.capacity() - s.buf.size();
    size_t k = std::min(room, n);
    s.buf.insert(s.buf.end(), p, p + k);
    p += k;
    n -= k;
    if (s.buf.size() == s.buf.capacity()) s.drain(path_, false);
  }
}

void OutputFile::finish() {
  Impl& s = *impl_;
  if (s.finished) return;
  s.drain(path_, true);
  s.finished = true;
  std::vector<uint8_t>().swap(s.buf);
  std::vector<uint8_t>().swap(s.zbuf);
  if (s.to_stdout) return;
  int fd = s.fd;
  s.fd = -1;
  if (::close(fd) != 0) throw Error(sys_error(path_ + ": cannot close output"));
}

void OutputFile::commit() {
  Impl& s = *impl_;
  finish();
  if (!s.to_stdout && ::rename(s.tmp_path.c_str(), path_.c_str()) != 0)
    throw Error(sys_error(path_ + ": cannot move finished output into place"));
  s.committed = true;
}

std::optional<uint32_t> rank_from_file_name(std::string_view name) {
  size_t slash = name.find_last_of('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  auto digits_at = [&](size_t i) -> std::optional<uint32_t> {
    size_t j = i;
    while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
    if (j == i || j - i > 6) return std::nullopt;
    return static_cast<uint32_t>(std::stoul(std::string(name.substr(i, j - i))));
  };
  // "rank3", "rank-3", "rank_3", "worker3", "worker_3"
  for (std::string_view word : {"rank", "worker"}) {
    size_t at = name.find(word);
    if (at == std::string_view::npos) continue;
    size_t i = at + word.size();
    if (i < name.size() && (name[i] == '-' || name[i] == '_' || name[i] == '.')) ++i;
    if (auto r = digits_at(i)) return r;
  }
  // "prefix.3.et", "prefix.3.et.gz", "prefix_3.json": the last number before the extension(s).
  std::string_view stem = name;
  for (std::string_view ext : {".gz", ".et", ".eg", ".json", ".pt.trace", ".txt"})
    if (stem.size() > ext.size() && stem.substr(stem.size() - ext.size()) == ext) stem.remove_suffix(ext.size());
  size_t end = stem.size();
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(stem[begin - 1]))) --begin;
  if (begin == end || begin == 0 || !(stem[begin - 1] == '.' || stem[begin - 1] == '_' || stem[begin - 1] == '-'))
    return std::nullopt;
  // A number right after another number and a separator is part of a version or a date
  // ("1.0.2-chakra.0.0.4", "2023-07"), not a rank.
  if (begin >= 2 && std::isdigit(static_cast<unsigned char>(stem[begin - 2]))) return std::nullopt;
  return digits_at(begin);
}

std::string zip_store(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string out, central;
  auto u16 = [](std::string& s, uint32_t v) {
    s += static_cast<char>(v & 0xff), s += static_cast<char>((v >> 8) & 0xff);
  };
  auto u32 = [&](std::string& s, uint32_t v) { u16(s, v & 0xffff), u16(s, v >> 16); };
  if (files.size() > 0xffff)
    throw Error("zip: " + std::to_string(files.size()) + " files (at most 65535 without ZIP64)");
  uint64_t total = 0;
  for (const auto& [name, bytes] : files) total += 76 + 2 * name.size() + bytes.size();
  if (total > 0xffffffffu) throw Error("zip: " + std::to_string(total) + " bytes (at most 4 GiB without ZIP64)");
  for (const auto& file : files) {
    const std::string& name = file.first;  // not a structured binding: the lambda below uses it
    const std::string& bytes = file.second;
    if (name.empty() || name.size() > 0xffff) throw Error("zip: a file name must have 1 to 65535 bytes");
    const uint32_t crc = static_cast<uint32_t>(
        crc32(crc32(0, nullptr, 0), reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
    const uint32_t offset = static_cast<uint32_t>(out.size()), size = static_cast<uint32_t>(bytes.size());
    // Version 2.0, flags 0x0800 (UTF-8 names), method 0 (stored), time 00:00 of 1980-01-01.
    auto header = [&](std::string& s, bool in_central) {
      u32(s, in_central ? 0x02014b50 : 0x04034b50);
      if (in_central) u16(s, 20);
      u16(s, 20), u16(s, 0x0800), u16(s, 0), u16(s, 0), u16(s, 0x21);
      u32(s, crc), u32(s, size), u32(s, size);
      u16(s, static_cast<uint32_t>(name.size())), u16(s, 0);
      if (in_central) u16(s, 0), u16(s, 0), u16(s, 0), u32(s, 0), u32(s, offset);
      s += name;
    };
    header(out, false);
    out += bytes;
    header(central, true);
  }
  const uint32_t central_offset = static_cast<uint32_t>(out.size());
  out += central;
  u32(out, 0x06054b50), u16(out, 0), u16(out, 0);
  u16(out, static_cast<uint32_t>(files.size())), u16(out, static_cast<uint32_t>(files.size()));
  u32(out, static_cast<uint32_t>(central.size())), u32(out, central_offset), u16(out, 0);
  return out;
}

}  // namespace chakra
