// File: tests/fakes/apiserver/managed_fields.h
// metadata.managedFields bookkeeping and server-side apply.
//
// Simplification of upstream's structured-merge-diff: a field is a path of object keys; lists
// (and empty objects) are atomic leaves, so two managers setting different elements of the same
// list conflict, and applying a list replaces it whole (upstream merges list-maps by key and sets
// by value). fieldsV1 is written in the real format ({"f:spec":{"f:replicas":{}}}) without "k:"/
// "v:" element keys. Ownership rules follow upstream otherwise:
//  - Update operations (PUT/PATCH) take ownership of the fields they change, silently removing
//    it from other managers (no conflicts);
//  - Apply conflicts (409, one cause per field) when another manager owns a field whose value
//    the applied config changes, unless force=true, which transfers ownership;
//  - fields a manager applied before and omits now are removed from the object unless another
//    manager still owns them.
#pragma once

#include <string>

#include "nlohmann/json.hpp"

namespace neuron::fakes::apiserver {

using json = nlohmann::json;

struct FieldOwner {
  std::string manager;
  std::string operation;    // "Update" or "Apply"
  std::string subresource;  // "" or "status"
  std::string api_version;
};

// Records an Update by `who` that turned old_obj (null on create) into new_obj: rewrites
// new_obj.metadata.managedFields.
void TrackUpdate(const json& old_obj, json& new_obj, const FieldOwner& who);

// Server-side apply of `applied` onto `live` (a skeleton {apiVersion,kind,metadata} on create).
// Returns the merged object with managedFields set. Throws ApiError 409 on conflicts without
// force. `resource`/`group`/`name` are for the error text.
json ServerSideApply(const json& live, const json& applied, const FieldOwner& who, bool force,
                     const std::string& group, const std::string& resource,
                     const std::string& name);

}  // namespace neuron::fakes::apiserver
