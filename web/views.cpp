// The views, in tab order: the one list of them. A view is web/view_<name>.cpp defining
// make_<name>_view (a class of app_context.h's View) and a line here.
#include "app_context.h"

namespace chakra_web {

#define CHAKRA_VIEWS(X) \
  X(overview)           \
  X(nodes)              \
  X(graph)              \
  X(timeline)           \
  X(simulation)         \
  X(analysis)           \
  X(sweep)              \
  X(suite)

#define CHAKRA_DECLARE_VIEW(name) std::unique_ptr<View> make_##name##_view(AppContext& app);
CHAKRA_VIEWS(CHAKRA_DECLARE_VIEW)
#undef CHAKRA_DECLARE_VIEW

std::vector<std::unique_ptr<View>> make_views(AppContext& app) {
  std::vector<std::unique_ptr<View>> views;
#define CHAKRA_MAKE_VIEW(name) views.push_back(make_##name##_view(app));
  CHAKRA_VIEWS(CHAKRA_MAKE_VIEW)
#undef CHAKRA_MAKE_VIEW
  return views;
}

}  // namespace chakra_web
