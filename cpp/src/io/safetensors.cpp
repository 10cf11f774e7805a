// The safetensors reader: header validation and F32/F16/BF16 conversion.
#include "posenc/io/safetensors.hpp"

#include <algorithm>
#include <cstring>

#include "io/json_header.hpp"
#include "io/pointer_sort.hpp"

namespace posenc {

using detail::JsonValue;

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x3FFu;
  std::uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float bfloat16_to_float(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

namespace {

// Size in bytes of a safetensors dtype name; 0 for names that are not dtypes at all.
std::size_t dtype_size(const std::string& name) {
  static const struct {
    const char* name;
    std::size_t size;
  } kTypes[] = {{"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
                {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
                {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8}};
  for (const auto& t : kTypes)
    if (name == t.name) return t.size;
  return 0;
}

LayerError entry(const std::string& name, const JsonValue& v, std::size_t data_size,
                 TensorInfo* out) {
  auto bad = [&](LayerStatus s) { return layer_error(s, name); };
  if (v.type != JsonValue::Type::object || v.keys.size() != 3)
    return bad(LayerStatus::invalid_header);
  const JsonValue* dtype = v.find("dtype");
  const JsonValue* shape = v.find("shape");
  const JsonValue* offsets = v.find("data_offsets");
  if (dtype == nullptr || shape == nullptr || offsets == nullptr ||
      dtype->type != JsonValue::Type::string || shape->type != JsonValue::Type::array ||
      offsets->type != JsonValue::Type::array || offsets->items.size() != 2 ||
      !offsets->items[0].is_uint || !offsets->items[1].is_uint)
    return bad(LayerStatus::invalid_header);
  out->name = name;
  if (dtype->string == "F32") {
    out->dtype = DType::f32;
  } else if (dtype->string == "F16") {
    out->dtype = DType::f16;
  } else if (dtype->string == "BF16") {
    out->dtype = DType::bf16;
  } else {
    return bad(dtype_size(dtype->string) == 0 ? LayerStatus::invalid_header
                                              : LayerStatus::wrong_dtype);
  }
  const std::size_t size = out->dtype == DType::f32 ? 4 : 2;
  // Element count, bounded by what the data section could hold.
  const std::uint64_t limit = data_size / size;
  std::uint64_t elements = 1;
  for (const JsonValue& d : shape->items) {
    if (!d.is_uint || d.uint > (std::uint64_t{1} << 62)) return bad(LayerStatus::invalid_header);
    if (d.uint != 0 && elements > limit / d.uint) {
      elements = limit + 1;  // too many for the file; reported as bad offsets below
    } else {
      elements *= d.uint;
    }
    out->shape.push_back(static_cast<std::int64_t>(d.uint));
  }
  const std::uint64_t begin = offsets->items[0].uint, end = offsets->items[1].uint;
  if (elements > limit || begin > end || end > data_size || end - begin != elements * size)
    return bad(LayerStatus::invalid_offsets);
  out->elements = static_cast<std::size_t>(elements);
  out->begin = static_cast<std::size_t>(begin);
  out->end = static_cast<std::size_t>(end);
  return {};
}

}  // namespace

LayerError SafetensorsFile::parse(const std::uint8_t* bytes, std::size_t size) {
  *this = SafetensorsFile();
  if (bytes == nullptr || size < 8)
    return layer_error(LayerStatus::malformed_file, "header length");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | bytes[i];
  if (n < 2 || n > size - 8 || n > kMaxSafetensorsHeader)
    return layer_error(LayerStatus::malformed_file, "header length");
  JsonValue root;
  if (!detail::parse_json(reinterpret_cast<const char*>(bytes + 8), static_cast<std::size_t>(n),
                          &root) ||
      root.type != JsonValue::Type::object)
    return layer_error(LayerStatus::malformed_file, "header");

  // No empty tensor name: an error about it could not name it (found by fuzz_safetensors, first
  // as an entry, then as a duplicate). No key twice (sorted, so that a header of many keys stays
  // O(n log n)).
  std::vector<const void*> keys;
  keys.reserve(root.keys.size());
  for (const std::string& key : root.keys) {
    if (key.empty()) return layer_error(LayerStatus::invalid_header, "\"\"");
    keys.push_back(&key);
  }
  detail::sort_pointers(keys.data(), keys.size(), detail::string_less);
  for (std::size_t i = 1; i < keys.size(); ++i) {
    const std::string& key = *static_cast<const std::string*>(keys[i]);
    if (key == *static_cast<const std::string*>(keys[i - 1]))
      return layer_error(LayerStatus::invalid_header, key);
  }

  SafetensorsFile result;
  result.data_ = bytes + 8 + n;
  result.data_size_ = size - 8 - static_cast<std::size_t>(n);
  for (std::size_t i = 0; i < root.keys.size(); ++i) {
    const std::string& key = root.keys[i];
    const JsonValue& v = root.items[i];
    if (key == "__metadata__") {
      if (v.type != JsonValue::Type::object) return layer_error(LayerStatus::invalid_header, key);
      for (std::size_t m = 0; m < v.keys.size(); ++m) {
        if (v.items[m].type != JsonValue::Type::string)
          return layer_error(LayerStatus::invalid_header, "__metadata__." + v.keys[m]);
        result.metadata_.emplace_back(v.keys[m], v.items[m].string);
      }
      continue;
    }
    TensorInfo info;
    if (LayerError e = entry(key, v, result.data_size_, &info); !e.ok()) return e;
    result.tensors_.push_back(std::move(info));
  }
  // The ranges tile the data exactly, as the reference implementation requires: in order of
  // offsets each begins where the previous one ended (an earlier begin overlaps it, a later one
  // leaves a gap), the first at 0, and the last ends at the end of the data.
  std::vector<const void*> order;
  order.reserve(result.tensors_.size());
  for (const TensorInfo& t : result.tensors_)
    order.push_back(&t);
  detail::sort_pointers(order.data(), order.size(), [](const void* pa, const void* pb) {
    const auto* a = static_cast<const TensorInfo*>(pa);
    const auto* b = static_cast<const TensorInfo*>(pb);
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::size_t covered = 0;
  for (const void* entry_pointer : order) {
    const auto* t = static_cast<const TensorInfo*>(entry_pointer);
    if (t->begin < covered) return layer_error(LayerStatus::invalid_offsets, t->name);
    if (t->begin > covered) return layer_error(LayerStatus::uncovered_data, t->name);
    covered = t->end;
  }
  if (covered != result.data_size_) {  // bytes after the last tensor
    return layer_error(LayerStatus::uncovered_data, "data");
  }
  *this = std::move(result);
  return {};
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
  for (const TensorInfo& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

const std::string* SafetensorsFile::metadata(std::string_view key) const {
  for (const auto& kv : metadata_)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

LayerError SafetensorsFile::read_f32(const TensorInfo& t, float* out, std::size_t count) const {
  if (out == nullptr || count != t.elements || t.end > data_size_)
    return layer_error(LayerStatus::size_mismatch, t.name);
  const std::uint8_t* p = data_ + t.begin;
  switch (t.dtype) {
    case DType::f32:
      std::memcpy(out, p, count * 4);  // little-endian hosts (x86, Arm, wasm)
      break;
    case DType::f16:
      for (std::size_t i = 0; i < count; ++i)
        out[i] = half_to_float(static_cast<std::uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
      break;
    case DType::bf16:
      for (std::size_t i = 0; i < count; ++i)
        out[i] = bfloat16_to_float(static_cast<std::uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
      break;
  }
  return {};
}

}  // namespace posenc
