// Where the detector model and the tokenizer live.
#pragma once

#include <string>

namespace ttap {

inline constexpr const char* kDetectorFile = "detector.pt";
inline constexpr const char* kTokenizerFile = "ttap_names.model";

struct ModelFiles {
  std::string dir;        // the folder that held them
  std::string detector;   // DIR/detector.pt, "" when absent
  std::string tokenizer;  // DIR/ttap_names.model, "" when absent
};

// `hint` (--model: a folder, or a detector.pt whose folder holds the tokenizer) when
// given, else the first folder with a tokenizer among $TTAP_MODEL_DIR, models/ next to the
// executable, ../models beside it (a build folder in the source tree) and the install
// prefix's share/ttap/models. Throws InputError when `hint` names nothing usable or when
// no folder has a tokenizer, listing the places tried.
ModelFiles find_model_files(const std::string& hint);

}  // namespace ttap
