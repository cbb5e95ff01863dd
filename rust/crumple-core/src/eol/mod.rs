//! Eulerian-on-Lagrangian cloth (Weidner, Piddington, Levin, Sueda 2018;
//! spec `eol_cloth`): cloth that bends exactly at and slides along sharp
//! features (box edges and corners, wires, points) through vertices that
//! carry a material coordinate as well as a world position.
//!
//! What is here: the element kinematics and the generalized mass, force
//! and stiffness (`element`, `system`: §3, on the cloth module's membrane
//! and hinge kernels), sparse assembly that is the same for any thread count
//! (`sparse`), the constraint rows of §6 (`constraints`, with the conformal
//! Lagrangian baselines of §6.4), the step's QP (`qp`: a warm-started
//! active-set method on faer's sparse LDLᵀ, Clarabel as reference and
//! fallback, the KKT check of §10 test 10), obstacles (`obstacle`: boxes
//! in any orientation, static, translating or turning; wires and points,
//! static or translating),
//! the contact-conforming remesher (`remesh`: insertion where cloth edges
//! cross a box edge or a wire and where a point or box corner pokes through
//! a face, collapses into
//! EOL vertices, the repairs of §5.3 steps 2–3 at EOL vertices, the border
//! rules of §5.4, release), the time step with rollback (`step`) and
//! checkpoints (`checkpoint`), with Coulomb friction after the QP (§6.7),
//! and the ARCSim-style sizing remesh (`sizing`, §5.6), which alone is the
//! non-conformal baseline. The velocity of new collision vertices follows
//! §5.7 Eq. 13 or the `zero_eulerian` option (`Stepper::eq13`). Beyond the
//! paper: the cloth module's persistent wrinkles on the hinges, their state
//! carried through remeshing (`wrinkle`). Not yet: the rest of the
//! cleanup loop of §5.3.

pub mod checkpoint;
pub mod constraints;
pub mod element;
pub mod obstacle;
pub mod qp;
pub mod remesh;
pub mod sizing;
pub mod sparse;
pub mod step;
pub mod system;
pub mod wrinkle;

pub use constraints::Feature;
pub use element::{Grad, Mat2d};
pub use obstacle::{BoxEdge, BoxObstacle};
pub use qp::{Kkt, KktWorkspace, Qp, QpSolution, kkt, solve_clarabel};
pub use remesh::RemeshReport;
pub use sizing::{AdaptReport, Sizing};
pub use sparse::Csc;
pub use step::{Conformal, Pin, QpMethod, StepReport, Stepper, Timings};
pub use system::{AssemblyCache, ClothParams, Dofs, EdgeCounts, Mesh, System, assemble, assemble_with};
