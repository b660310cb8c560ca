#include "executor/model_signature.h"

#include <utility>

namespace sorun {
namespace {

constexpr size_t kNamesListed = 16;

// "a, b, c" over the entries `keep` selects, the first kNamesListed then "...".
template <typename Keep>
std::string ListNames(const std::vector<TensorInfo>& infos, Keep keep) {
  std::string names;
  size_t listed = 0;
  for (const TensorInfo& info : infos) {
    if (!keep(info)) continue;
    if (listed == kNamesListed) {
      names += ", ...";
      break;
    }
    names += (names.empty() ? "" : ", ") + info.name;
    ++listed;
  }
  return names.empty() ? "none" : names;
}

// k of "output_<k>" (digits only, no sign or leading zeros past the first), else -1.
int GenericOutputIndex(std::string_view name) {
  constexpr std::string_view kPrefix = "output_";
  if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) return -1;
  const std::string_view digits = name.substr(kPrefix.size());
  if (digits.size() > 9 || (digits.size() > 1 && digits[0] == '0')) return -1;
  int k = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    k = k * 10 + (c - '0');
  }
  return k;
}

}  // namespace

std::shared_ptr<const ModelSignature> ModelSignature::Make(std::vector<TensorInfo> inputs,
                                                           std::vector<TensorInfo> outputs, bool outputs_known) {
  std::shared_ptr<ModelSignature> s(new ModelSignature());
  s->inputs_ = std::move(inputs);
  s->outputs_ = std::move(outputs);
  s->outputs_known_ = outputs_known || !s->outputs_.empty();
  // The first of two equal names wins (a graph validated by plan_validation has none).
  for (size_t i = 0; i < s->inputs_.size(); ++i) s->input_index_.emplace(s->inputs_[i].name, static_cast<int>(i));
  for (size_t i = 0; i < s->outputs_.size(); ++i) s->output_index_.emplace(s->outputs_[i].name, static_cast<int>(i));
  return s;
}

StatusOr<int> ModelSignature::InputIndex(std::string_view name) const {
  auto it = input_index_.find(std::string(name));
  if (it != input_index_.end()) return it->second;
  return NotFound("no input named '" + std::string(name) +
                  "' (inputs: " + ListNames(inputs_, [](const TensorInfo& i) { return !i.is_param; }) + ")");
}

StatusOr<int> ModelSignature::OutputIndex(std::string_view name) const {
  auto it = output_index_.find(std::string(name));
  if (it != output_index_.end()) return it->second;
  if (name.size() > 2 && name.substr(name.size() - 2) == ":0") {
    it = output_index_.find(std::string(name.substr(0, name.size() - 2)));
    if (it != output_index_.end()) return it->second;
  }
  if (!outputs_known_) {
    const int k = GenericOutputIndex(name);
    if (k >= 0) return k;
    return NotFound("no output named '" + std::string(name) +
                    "' (this model's outputs are named output_0, output_1, ... in the order a run returns them)");
  }
  return NotFound("no output named '" + std::string(name) +
                  "' (outputs: " + ListNames(outputs_, [](const TensorInfo&) { return true; }) + ")");
}

Status ModelSignature::CheckIndex(int index, int count, const char* what) {
  if (index >= 0 && index < count) return Status::Ok();
  return OutOfRange(std::string(what) + " index " + std::to_string(index) + " out of range (the model has " +
                    std::to_string(count) + " " + what + "s)");
}

}  // namespace sorun
