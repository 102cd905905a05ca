#pragma once

#include <string>

namespace ttap {

std::string_view version();
// Multi-line: ttap's version and every linked component's, for `ttap --version`.
std::string version_report();

}  // namespace ttap
