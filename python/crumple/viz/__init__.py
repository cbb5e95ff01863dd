"""Looking at results with polyscope (imported lazily: ``pip install crumple[viz]``).

- :func:`show` opens a window with the given items.
- :func:`screenshot` renders them to a PNG without a window. With no display
  it uses polyscope's EGL backend, which runs on Mesa's software OpenGL on a
  machine without a GPU.

Written runs (:func:`crumple.io.open_run`, streams of
:class:`~crumple.frames.Frame`):

- :func:`play_scene` runs a built-in scene and opens it in that window
  when a display exists (the gallery scripts, ``examples/gallery/``);
- :func:`view_run` opens a window with a timeline (frame slider, play/pause,
  step buttons);
- :func:`screenshot_run` renders one frame to a PNG without a window;
- :func:`render_video` renders every frame into an ``.mp4`` (imageio +
  imageio-ffmpeg, ``pip install 'crumple[video]'``) or a ``.gif`` (Pillow).

Items are :class:`~crumple.geometry.TriMesh`, :class:`~crumple.geometry.Curves`,
``(vertices, faces)`` tuples, ``(N, 3)`` point arrays, or a mapping from a name
to any of these.
"""

from __future__ import annotations

from .runs import play_scene, screenshot_run, view_run
from .video import render_video
from .window import Item, has_display, screenshot, show

__all__ = ["show", "screenshot", "Item", "view_run", "screenshot_run", "render_video", "play_scene", "has_display"]
