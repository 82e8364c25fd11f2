// The Timeline view's rows, one class per kind of row, as Tracy's timeline items: a track (a CPU
// thread, a GPU stream or a simulated NPU's lane: the core's TimelineModel names each and they
// draw alike) and a folded rank (every track of a rank drawn over each other in one row). The
// view's TimelineFrame is the controller: it lays the rows out, pans, zooms and selects; each row
// draws itself, names itself and finds its events. Private to web/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <imgui.h>

#include "app.h"

namespace chakra_web {

// A slice wide enough to carry its name, where it is drawn.
struct SliceLabel {
  ImVec2 p0, p1;
  uint32_t track, index;
};

// Where a row is drawn (screen pixels) and the time window it shows.
struct RowPlace {
  float x_left = 0, width = 0, y = 0, height = 0;
  double t0 = 0, px_per_unit = 1;
};

class TimelineItem {
 public:
  TimelineItem(const chakra::TimelineModel& model, const chakra::TimelineRow& row) : model_(model), row_(row) {}
  virtual ~TimelineItem() = default;
  virtual std::string label() const = 0;  // its name in the label column
  // Its slices on screen as rectangles, and the ones wide enough for a name.
  virtual void draw(const RowPlace& at, double t1, std::vector<RectInstance>& rects,
                    std::vector<SliceLabel>& labels) const = 0;
  // The event under time `t` (within `slack`), if there is one.
  virtual std::optional<chakra::TimelineModel::Ref> event_at(double t, double slack) const = 0;

 protected:
  // The rectangles covering the pixels of track `t` (chakra::visible_rects), each handed to `put`
  // with its screen span.
  template <typename Put>
  void each_rect(uint32_t t, const RowPlace& at, double t1, Put put) const;
  ImU32 colour(uint8_t category, float alpha) const;
  const chakra::TimelineModel& model_;
  const chakra::TimelineRow& row_;
};

// One lane of a thread, a stream or a simulated NPU.
class TrackItem final : public TimelineItem {
 public:
  using TimelineItem::TimelineItem;
  std::string label() const override;
  void draw(const RowPlace& at, double t1, std::vector<RectInstance>& rects,
            std::vector<SliceLabel>& labels) const override;
  std::optional<chakra::TimelineModel::Ref> event_at(double t, double slack) const override;
};

// A rank folded into one row: its tracks drawn over each other, dimmed, unnamed slices.
class FoldedRankItem final : public TimelineItem {
 public:
  using TimelineItem::TimelineItem;
  std::string label() const override;
  void draw(const RowPlace& at, double t1, std::vector<RectInstance>& rects,
            std::vector<SliceLabel>& labels) const override;
  std::optional<chakra::TimelineModel::Ref> event_at(double t, double slack) const override;
};

// Calls `use` with the item of `row`'s kind.
template <typename Use>
void with_timeline_item(const chakra::TimelineModel& model, const chakra::TimelineRow& row, Use use) {
  if (row.collapsed)
    use(static_cast<const TimelineItem&>(FoldedRankItem(model, row)));
  else
    use(static_cast<const TimelineItem&>(TrackItem(model, row)));
}

}  // namespace chakra_web
