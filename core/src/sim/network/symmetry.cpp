#include "sim/network/symmetry.h"

namespace chakra::sim {

Symmetry::Symmetry(const NetworkConfig& net, std::vector<Rotation> rotations) : rotations_(std::move(rotations)) {
  uint32_t stride = 1;
  for (const uint32_t n : net.npus) {
    sizes_.push_back(n);
    strides_.push_back(stride);
    stride *= n;
  }
  for (const Rotation& r : rotations_) {
    order_ *= r.radix;
    place_.push_back(r.stride * strides_[r.dim]);
  }
  const uint32_t npus = stride;
  digits_.resize(size_t(npus) * rotations_.size());
  canonical_.resize(npus);
  for (uint32_t n = 0; n < npus; ++n) {
    uint32_t lowest = n;
    for (size_t r = 0; r < rotations_.size(); ++r) {
      const uint32_t d = digit(n, rotations_[r]);
      digits_[n * rotations_.size() + r] = d;
      lowest -= d * place_[r];
    }
    canonical_[n] = lowest;
  }
}

std::vector<Rotation> Symmetry::of_network(const NetworkConfig& net) {
  std::vector<Rotation> out;
  for (uint32_t d = 0; d < net.npus.size(); ++d) {
    const uint32_t n = net.npus[d];
    if (net.topology[d] == TopologyKind::Ring) {
      if (n > 1) out.push_back({d, 1, n});
      continue;
    }
    std::vector<uint32_t> divisors;  // of n, ascending
    for (uint32_t k = 1; uint64_t(k) * k <= n; ++k)
      if (n % k == 0) divisors.push_back(k);
    for (size_t i = divisors.size(); i-- > 0;)
      if (divisors[i] != n / divisors[i]) divisors.push_back(n / divisors[i]);
    for (const uint32_t stride : divisors)
      for (const uint32_t radix : divisors)
        if (radix > 1 && (n / stride) % radix == 0) out.push_back({d, stride, radix});
  }
  return out;
}

uint32_t Symmetry::digit(uint32_t npu, const Rotation& r) const {
  const uint32_t coord = (npu / strides_[r.dim]) % sizes_[r.dim];
  return (coord / r.stride) % r.radix;
}

uint32_t Symmetry::rotate(uint32_t npu, const Rotation& r, uint32_t steps) const {
  const uint32_t from = digit(npu, r), to = (from + steps) % r.radix;
  return npu + to * r.stride * strides_[r.dim] - from * r.stride * strides_[r.dim];
}

uint32_t Symmetry::apply(uint32_t e, uint32_t npu) const {
  for (const Rotation& r : rotations_) {
    npu = rotate(npu, r, e % r.radix);
    e /= r.radix;
  }
  return npu;
}

uint32_t Symmetry::element_taking(uint32_t npu) const {
  uint32_t e = 0, place = 1;
  for (const Rotation& r : rotations_) {
    e += (r.radix - digit(npu, r)) % r.radix * place;
    place *= r.radix;
  }
  return e;
}

}  // namespace chakra::sim
