//! Colliders, kinematic motion and the shared boundary response.
