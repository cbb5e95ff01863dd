//! Eulerian-on-Lagrangian cloth (Weidner, Piddington, Levin, Sueda 2018;
//! spec `eol_cloth`): cloth that bends exactly at and slides along sharp
//! features (box edges and corners, wires, points) through vertices that
//! carry a material coordinate as well as a world position.
//!
//! What is here so far (the spec's first milestone, §12.6 item 1, and the
//! step on a prepared mesh): the element kinematics and the generalized
//! mass, force and stiffness (`element`, `system`: §3, on the cloth
//! module's membrane and hinge kernels), sparse assembly that is the same
//! for any thread count (`sparse`), the constraint rows of §6 (`constraints`),
//! the step's QP with Clarabel as the reference solver and the KKT check of
//! §10 test 10 (`qp`), and the time step on a mesh whose EOL vertices are
//! already on their features (`step`). Not yet: collision detection that
//! creates EOL vertices (§4), the contact-conforming remesher and state
//! transfer (§5), moving obstacles, friction, the Python module.

pub mod constraints;
pub mod element;
pub mod qp;
pub mod sparse;
pub mod step;
pub mod system;

pub use element::{Grad, Mat2d};
pub use qp::{Kkt, Qp, QpSolution, kkt, solve_clarabel};
pub use sparse::Csc;
pub use step::{BoxObstacle, StepReport, Stepper};
pub use system::{ClothParams, Dofs, Mesh, System, assemble};
