// File: lib/k8s/object_view.cc
#include "lib/k8s/object_view.h"

#include <algorithm>

#include "lib/base/json_access.h"

namespace neuron::k8s {

using nlohmann::json;

ObjectView::ObjectView(const json& obj)
    : obj_(obj),
      meta_(Obj(obj, "metadata")),
      spec_(Obj(obj, "spec")),
      status_(Obj(obj, "status")) {}

std::string_view ObjectView::Text(const json& obj, std::string_view key) {
  const json* v = Member(obj, key);
  return v != nullptr && v->is_string() ? std::string_view(v->get_ref<const std::string&>())
                                        : std::string_view();
}

const json& ObjectView::Obj(const json& obj, std::string_view key) {
  static const json kEmpty = json::object();
  const json* v = Member(obj, key);
  return v != nullptr && v->is_object() ? *v : kEmpty;
}

const json& ObjectView::Arr(const json& obj, std::string_view key) {
  static const json kEmpty = json::array();
  const json* v = Member(obj, key);
  return v != nullptr && v->is_array() ? *v : kEmpty;
}

int64_t ObjectView::generation() const { return IntOf(Member(meta_, "generation")); }

bool ObjectView::deleting() const { return Member(meta_, "deletionTimestamp") != nullptr; }

std::string ObjectView::key() const {
  const std::string_view ns = namespace_();
  return ns.empty() ? std::string(name()) : std::string(ns).append("/").append(name());
}

bool ObjectView::has_label(std::string_view key) const { return Member(labels(), key) != nullptr; }

bool ObjectView::has_finalizer(std::string_view finalizer) const {
  const json& list = Arr(meta_, "finalizers");
  return std::any_of(list.begin(), list.end(), [&](const json& f) {
    return f.is_string() && f.get_ref<const std::string&>() == finalizer;
  });
}

bool NodeView::has_taint(std::string_view key) const {
  const json& list = taints();
  return std::any_of(list.begin(), list.end(),
                     [&](const json& t) { return Text(t, "key") == key; });
}

bool NodeView::unschedulable() const { return BoolOf(Member(spec_, "unschedulable")); }

bool PodView::finished() const { return phase() == "Succeeded" || phase() == "Failed"; }

}  // namespace neuron::k8s
