// chakra view: the web page served from this machine (127.0.0.1 only), opened in the browser
// with the given traces preloaded — TensorBoard's habit, with nothing uploaded anywhere.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "chakra/format/io.h"
#include "chakra/format/json_writer.h"
#include "chakra/support/error.h"
#include "chakra/app/sim_presets.h"
#include "cli.h"
#include "commands.h"

extern char** environ;

namespace fs = std::filesystem;

namespace {

// The page's folder: --web, $CHAKRA_WEB_DIR, or beside the binary (installed: share/chakrakit/web;
// the build tree: build/native/native/chakra → build/wasm/web).
fs::path find_web_dir(const cli::Args& args) {
  std::vector<fs::path> candidates;
  if (args.has("--web")) {
    candidates.push_back(args.get("--web"));
  } else if (const char* env = std::getenv("CHAKRA_WEB_DIR"); env && *env) {
    candidates.push_back(env);
  } else {
    std::error_code ec;
    const fs::path exe = fs::canonical("/proc/self/exe", ec).parent_path();
    candidates.push_back(exe / "../share/chakrakit/web");
    candidates.push_back(exe / "../../wasm/web");
  }
  for (const fs::path& dir : candidates)
    if (fs::is_regular_file(dir / "index.html")) return fs::canonical(dir);
  throw chakra::Error("no web page at " + candidates.front().string() +
                      " (index.html missing): build it (tests/run, or the wasm build in the README) or give --web DIR");
}

std::string content_type(const fs::path& p) {
  const std::string ext = p.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js") return "text/javascript";
  if (ext == ".wasm") return "application/wasm";
  if (ext == ".json") return "application/json";
  return "application/octet-stream";
}

std::string percent_decoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

void send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return;  // the browser went away: nothing to do
    data.remove_prefix(static_cast<size_t>(n));
  }
}

void respond(int fd, int status, const std::string& type, const std::string& body, bool head) {
  const char* reason = status == 200 ? "OK" : status == 404 ? "Not Found" : "Bad Request";
  std::string header = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " + type +
                       "\r\nContent-Length: " + std::to_string(body.size()) +
                       "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
  send_all(fd, header);
  if (!head) send_all(fd, body);
}

struct Site {
  fs::path web;
  std::vector<fs::path> preload;
  std::string manifest;  // {"files": ["preload/0/name", ...]}
};

// One request per connection: GET or HEAD of a file of the page, the preload manifest or a
// preloaded file. Nothing outside the page's folder and the named files is ever read.
void serve_one(int fd, const Site& site) {
  timeval timeout{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string request;
  char buf[4096];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    request.append(buf, static_cast<size_t>(n));
  }
  const size_t sp1 = request.find(' '), sp2 = sp1 == std::string::npos ? sp1 : request.find(' ', sp1 + 1);
  if (sp2 == std::string::npos) return respond(fd, 400, "text/plain", "bad request\n", false);
  const std::string method = request.substr(0, sp1);
  const bool head = method == "HEAD";
  if (method != "GET" && !head) return respond(fd, 400, "text/plain", "only GET and HEAD\n", false);
  std::string path = percent_decoded(std::string_view(request).substr(sp1 + 1, sp2 - sp1 - 1));
  path = path.substr(0, path.find('?'));
  if (path == "/") path = "/index.html";
  if (path == "/preload/manifest.json") return respond(fd, 200, "application/json", site.manifest, head);
  const fs::path rel = fs::path(path).relative_path().lexically_normal();
  for (const auto& part : rel)
    if (part == "..") return respond(fd, 404, "text/plain", "not found\n", head);
  fs::path file;
  if (rel.begin() != rel.end() && *rel.begin() == "preload") {  // preload/<index>/<name>
    auto it = std::next(rel.begin());
    if (it != rel.end()) {
      const std::string index = it->string();
      const size_t i =
          index.find_first_not_of("0123456789") == std::string::npos && index.size() < 9 ? std::stoul(index) : SIZE_MAX;
      if (i < site.preload.size() && std::next(it) != rel.end() && *std::next(it) == site.preload[i].filename())
        file = site.preload[i];
    }
  } else {
    file = site.web / rel;
  }
  std::error_code ec;
  if (file.empty() || !fs::is_regular_file(file, ec)) return respond(fd, 404, "text/plain", "not found\n", head);
  std::ifstream in(file, std::ios::binary);  // as stored: the page itself unpacks .gz
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) return respond(fd, 404, "text/plain", "not found\n", head);
  respond(fd, 200, content_type(file), body, head);
}

// Opens `url` with xdg-open when there is a display; false when there is none or it failed.
bool open_browser(const std::string& url) {
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY")) return false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::string program = "xdg-open";
  char* argv[] = {program.data(), const_cast<char*>(url.c_str()), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "xdg-open", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return false;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int run_view(const cli::Args& args) {
  Site site;
  site.web = find_web_dir(args);
  for (const std::string& f : cli::files_under(args.values("PATH"))) site.preload.emplace_back(f);
  {
    chakra::StringSink sink;
    chakra::JsonWriter w(sink);
    w.begin_object();
    w.key("files").begin_array();
    for (size_t i = 0; i < site.preload.size(); ++i)
      w.value("preload/" + std::to_string(i) + "/" + site.preload[i].filename().string());
    w.end_array();
    if (args.has("--simulate")) w.key("simulate").value(chakra::cluster_preset(args.get("--simulate")).name);
    w.end_object();
    w.flush();
    site.manifest = sink.out + "\n";
  }
  const uint64_t port = args.get_uint("--port", 65535);
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) throw chakra::Error("cannot open a socket");
  const int yes = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // this machine only
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listener, 64) != 0) {
    close(listener);
    throw chakra::Error("cannot listen on 127.0.0.1:" + std::to_string(port) + " (in use? give another --port, or 0)");
  }
  socklen_t len = sizeof addr;
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string url =
      "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/" + (site.preload.empty() ? "" : "?preload");
  std::cout << "chakra view: " << url << " (" << site.preload.size() << " files to preload; Ctrl-C stops)" << std::endl;
  if (!args.has("--no-browser") && !open_browser(url))
    std::cerr << "chakra view: no browser opened (no display, or xdg-open failed): open " << url << " yourself\n";
  cli::install_interrupt_handler();
  while (!cli::interrupted()) {
    pollfd p{listener, POLLIN, 0};
    if (poll(&p, 1, 250) <= 0) continue;
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) continue;
    serve_one(fd, site);
    close(fd);
  }
  close(listener);
  std::cerr << "chakra view: stopped\n";
  return cli::kOk;
}

}  // namespace

int cmd_view(int argc, char** argv) {
  cli::Args args("chakra view",
                 "Serve the web page on this machine (127.0.0.1, nothing leaves it) and open it in the\n"
                 "browser with the given traces preloaded: files, or folders whose files are all\n"
                 "opened (a run folder of per-rank traces, host ETs with their Kineto traces).\n"
                 "Runs until Ctrl-C.");
  args.positional("PATH", "trace files or folders to open in the page", false, true);
  args.option("--port", "N", "port to listen on (0: a free one)", "0");
  args.option("--web", "DIR", "the built page (default: $CHAKRA_WEB_DIR, or found beside this binary)");
  args.flag("--no-browser", "only print the address");
  args.option("--simulate", "PRESET",
              "once the traces are open, simulate them on this cluster (chakra simulate --preset)");
  args.parse(argc, argv);
  return cli::run_guarded("chakra view", run_view, args);
}

CHAKRA_COMMAND(180, "view", cmd_view, "serve the web page on 127.0.0.1 and open it with the given traces preloaded");
