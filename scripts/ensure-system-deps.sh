#!/usr/bin/env bash
# Installs the system libraries crumple's tests and demo use, when missing and
# apt is usable: Mesa's Vulkan software driver (lavapipe, so the wgpu backend
# runs on machines without a GPU) and EGL + Mesa OpenGL (headless polyscope
# screenshots). Prints one line when it cannot, and never fails the build:
# GPU tests then skip with a reason (unless CRUMPLE_REQUIRE_GPU=1).
set -u
need=()
ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || need+=(mesa-vulkan-drivers)
ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1' || need+=(libvulkan1)
ldconfig -p 2>/dev/null | grep -q 'libEGL.so.1' || need+=(libegl1)
ls /usr/share/glvnd/egl_vendor.d/*mesa*.json >/dev/null 2>&1 || need+=(libegl-mesa0)
ls /usr/lib/*/dri/swrast_dri.so >/dev/null 2>&1 || need+=(libgl1-mesa-dri)
ldconfig -p 2>/dev/null | grep -q 'libGL.so.1' || need+=(libgl1)
[ ${#need[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "crumple: cannot install ${need[*]} (no apt-get); GPU tests will skip and screenshots may fail"
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
    echo "crumple: cannot install ${need[*]} (not root, no passwordless sudo); GPU tests will skip"
    exit 0
  fi
fi
echo "crumple: installing ${need[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"; } >/tmp/crumple-apt.log 2>&1; then
  echo "crumple: apt-get could not install ${need[*]} (see /tmp/crumple-apt.log); GPU tests will skip"
fi
exit 0
