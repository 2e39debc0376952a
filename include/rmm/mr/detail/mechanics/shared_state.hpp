/**
 * @file shared_state.hpp
 * @brief Access from a shared_resource-derived resource to its shared state, for getters such as
 * pool_size(): cuda::mr::shared_resource keeps its state private but forwards stateful properties.
 */
#pragma once

namespace rmm::mr::detail {

/**
 * @brief A stateful property whose value is a pointer to a resource's shared state. The state
 * type declares `friend Impl* get_property(Impl const&, state_of<Impl>) noexcept`;
 * cuda::mr::shared_resource<Impl> forwards it. Not for use outside the library.
 */
template <typename Impl>
struct state_of {
  using value_type = Impl*;
};

/// @brief The shared state of @p resource (which must not be moved-from).
template <typename Impl, typename Resource>
Impl& shared_state(Resource const& resource) noexcept {
  return *get_property(resource, state_of<Impl>{});
}

}  // namespace rmm::mr::detail
