// The shell's state: what App keeps around the views (files being opened, conversions, the tab
// shown, the panes, share links). Private to web/: app.cpp, commands.cpp, details_pane.cpp,
// share_state.cpp, status.cpp.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app_context.h"

namespace chakra_web {

struct App::Impl : AppContext {
  explicit Impl(Platform& p) : AppContext(p) {}

  // Files queued in the order the page handed them over; a file read in slices is queued when
  // its first slice is (App::begin_file) and takes its pieces wherever it is.
  struct Pending {
    uint32_t id = 0;
    std::unique_ptr<chakra::Workspace::Loading> file;
  };
  std::deque<Pending> queue;
  std::unique_ptr<chakra::Workspace::Loading> loading;
  // Ids from 1; 0 is a rank conversion's result, opened like a file (App::conversion_finished).
  uint32_t loading_id = 0, next_file_id = 1;
  int files_expected = 0;  // announced by the page, not handed over yet (App::expect_files)
  // Rank conversions running on the platform.
  struct Converting {
    uint32_t rank = 0;
    uint64_t generation = 0;
    std::string files;       // what is converted
    const char* phase = "";  // for the status: "linking and converting" ...
  };
  std::vector<Converting> converting;
  void start_conversions();  // the workspace's jobs, once no PyTorch file of theirs is still coming
  void open_converted(chakra::ConvertedRank result);          // queued first, opened like a file
  chakra::Workspace::Loading* file_by_id(uint32_t id) const;  // queued or being opened; null if gone
  void drop_file(uint32_t id);
  void file_opened(chakra::InputKind kind);  // what follows a file's opening

  float sidebar_width = 260, details_width = 340;  // pane widths, changed by dragging the bars
  void draw_views();
  void draw_sidebar();
  void draw_synthetic();
  void draw_keys();
  void draw_details();  // the selected node (details_pane.cpp)

  // Share links (share_state.cpp). A link's runs are made again once as many files as it names
  // are open (the page hands them over one by one).
  size_t link_files = 0;
  std::string last_hash;
  std::string pending_hash;                                         // applied once the files it names are open
  std::optional<std::pair<uint32_t, uint64_t>> deferred_selection;  // (rank, node id) from a link, before its files
  chakra::ShareState state() const;
  void apply(const chakra::ShareState& s);
};

}  // namespace chakra_web
