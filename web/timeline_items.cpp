#include "timeline_items.h"

#include <algorithm>

#include "widgets.h"

namespace chakra_web {

ImU32 TimelineItem::colour(uint8_t category, float alpha) const {
  return model_.categories == chakra::TimelineCategories::SpanKind ? span_kind_colour(category, alpha)
                                                                   : activity_colour(category, alpha);
}

template <typename Put>
void TimelineItem::each_rect(uint32_t t, const RowPlace& at, double t1, Put put) const {
  thread_local std::vector<chakra::TimelineRect> rects;  // reused: no allocation per row and frame
  rects.clear();
  chakra::visible_rects(model_.tracks[t], at.t0, t1, at.px_per_unit, rects);
  for (const chakra::TimelineRect& r : rects) {
    const float x0 = at.x_left + static_cast<float>(std::max(r.x0, -1.0));
    const float x1 =
        std::max(at.x_left + static_cast<float>(std::min(r.x1, static_cast<double>(at.width) + 1)), x0 + 1);
    put(r, x0, x1);
  }
}

std::string TrackItem::label() const { return chakra::timeline_track_label(model_, model_.tracks[row_.first_track]); }

void TrackItem::draw(const RowPlace& at, double t1, std::vector<RectInstance>& rects,
                     std::vector<SliceLabel>& labels) const {
  const uint32_t t = row_.first_track;
  each_rect(t, at, t1, [&](const chakra::TimelineRect& r, float x0, float x1) {
    rects.push_back({x0, at.y + 1, x1, at.y + at.height - 1, colour(r.category, r.count > 1 ? 0.75f : 1.0f)});
    if (r.count == 1 && x1 - x0 > 50)
      labels.push_back({ImVec2(x0, at.y + 1), ImVec2(x1, at.y + at.height - 1), t, r.first});
  });
}

std::optional<chakra::TimelineModel::Ref> TrackItem::event_at(double t, double slack) const {
  if (auto e = chakra::pick_event(model_.tracks[row_.first_track], t, slack))
    return chakra::TimelineModel::Ref{row_.first_track, *e};
  return std::nullopt;
}

std::string FoldedRankItem::label() const {
  return chakra::timeline_group_label(model_, row_.group) + " (" + std::to_string(row_.tracks) + " tracks)";
}

void FoldedRankItem::draw(const RowPlace& at, double t1, std::vector<RectInstance>& rects,
                          std::vector<SliceLabel>&) const {
  for (uint32_t k = 0; k < row_.tracks; ++k)
    each_rect(row_.first_track + k, at, t1, [&](const chakra::TimelineRect& r, float x0, float x1) {
      rects.push_back({x0, at.y + 1, x1, at.y + at.height - 1, colour(r.category, 0.75f)});
    });
}

std::optional<chakra::TimelineModel::Ref> FoldedRankItem::event_at(double t, double slack) const {
  for (uint32_t k = 0; k < row_.tracks; ++k)  // the first of its tracks with one there
    if (auto e = chakra::pick_event(model_.tracks[row_.first_track + k], t, slack))
      return chakra::TimelineModel::Ref{row_.first_track + k, *e};
  return std::nullopt;
}

}  // namespace chakra_web
