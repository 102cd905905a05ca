// The anti-pattern catalog (docs: ../shared/docs/ANTIPATTERNS.md, copied to
// docs/ANTIPATTERNS.md): the stable ids every finding, label and CI rule uses.
#pragma once

#include <span>
#include <string_view>

namespace ttap {

struct AntiPattern {
  std::string_view id;         // stable public id, e.g. "host_sync"
  std::string_view name;       // one line, for people
  std::string_view signature;  // what it looks like in a Kineto trace
  std::string_view fix;        // the typical fix
};

// Every id, in the catalog's order.
std::span<const AntiPattern> catalog();
// The entry for `id`, or nullptr when it is not a catalog id.
const AntiPattern* find_anti_pattern(std::string_view id);
inline bool is_catalog_id(std::string_view id) { return find_anti_pattern(id) != nullptr; }

}  // namespace ttap
