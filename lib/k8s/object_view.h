// File: lib/k8s/object_view.h
// Typed, read-only views of API objects held as JSON (what the caches hand out): named
// accessors instead of key paths spelled at each use, null-safe as lib/base/json_access.h is
// (absent or mistyped fields read as empty), and no copies: a view points into the object,
// which must outlive it.
//
//   const k8s::NodeView node(*cached);
//   if (node.label("node.kubernetes.io/instance-type") == "trn2.48xlarge" && !node.deleting()) ...
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

namespace neuron::k8s {

// metadata of any object.
class ObjectView {
 public:
  explicit ObjectView(const nlohmann::json& obj);

  std::string_view name() const { return Text(meta_, "name"); }
  std::string_view namespace_() const { return Text(meta_, "namespace"); }
  std::string_view uid() const { return Text(meta_, "uid"); }
  std::string_view resource_version() const { return Text(meta_, "resourceVersion"); }
  int64_t generation() const;
  // metadata.deletionTimestamp is set: the object is going away.
  bool deleting() const;
  // "namespace/name", or "name" for a cluster-scoped object (the caches' key).
  std::string key() const;

  // Objects (empty when absent or not an object) and their string values.
  const nlohmann::json& labels() const { return Obj(meta_, "labels"); }
  const nlohmann::json& annotations() const { return Obj(meta_, "annotations"); }
  std::string_view label(std::string_view key) const { return Text(labels(), key); }
  std::string_view annotation(std::string_view key) const { return Text(annotations(), key); }
  bool has_label(std::string_view key) const;
  bool has_finalizer(std::string_view finalizer) const;

  const nlohmann::json& object() const { return obj_; }

 protected:
  // The string at obj[key], or "" (absent, null or not a string).
  static std::string_view Text(const nlohmann::json& obj, std::string_view key);
  // The object at obj[key], or a static empty object.
  static const nlohmann::json& Obj(const nlohmann::json& obj, std::string_view key);
  // The array at obj[key], or a static empty array.
  static const nlohmann::json& Arr(const nlohmann::json& obj, std::string_view key);

  const nlohmann::json& obj_;
  const nlohmann::json& meta_;
  const nlohmann::json& spec_;
  const nlohmann::json& status_;
};

// A v1 Node.
class NodeView : public ObjectView {
 public:
  using ObjectView::ObjectView;
  const nlohmann::json& taints() const { return Arr(spec_, "taints"); }  // an array
  bool has_taint(std::string_view key) const;
  bool unschedulable() const;
};

// A v1 Pod.
class PodView : public ObjectView {
 public:
  using ObjectView::ObjectView;
  std::string_view node_name() const { return Text(spec_, "nodeName"); }
  std::string_view phase() const { return Text(status_, "phase"); }
  // Succeeded or Failed: the pod holds nothing any more.
  bool finished() const;
};

}  // namespace neuron::k8s
