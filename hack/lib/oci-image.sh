# shellcheck shell=bash
# hack/lib/oci-image.sh: writes OCI image-layout archives with bash, GNU tar, gzip and
# sha256sum only (no Docker, no registry, no extra tools). Source it, then:
#
#   oci_layer [--root-owned] [--comment TEXT] <rootfs dir> <layer dir>
#       Packs the directory into <layer dir>/layer.tar.gz and records the layer's diff_id
#       (sha256 of the uncompressed tar) in <layer dir>/diff_id. Deterministic: entries in
#       C-locale name order, every mtime set to $SOURCE_DATE_EPOCH (default 0), numeric
#       owners (all 0:0 with --root-owned), no atime/ctime/xattrs, `gzip -n`.
#
#   oci_image_archive <out.tar> <image name> <config object JSON> <layer dir>...
#       Writes an OCI image layout as one tar: oci-layout, index.json, blobs/sha256/<layers,
#       config, manifest>, plus a Docker-style manifest.json so `docker load` of older
#       engines takes it too. The index descriptor carries the full image name in both
#       org.opencontainers.image.ref.name and io.containerd.image.name, so
#       `ctr images import` and `docker load` name the image. <config object JSON> is the
#       image config's "config" member ({"User":..., "Entrypoint":[...], ...}).
#
# The same inputs give a byte-identical archive (and so the same image digest).

OCI_EPOCH="${SOURCE_DATE_EPOCH:-0}"
OCI_CREATED="$(date -u -d "@$OCI_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
OCI_GZIP_LEVEL="${OCI_GZIP_LEVEL:-6}"

oci_arch() { # Go/OCI name of this machine's architecture
  case "$(uname -m)" in
    x86_64) echo amd64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) uname -m ;;
  esac
}
OCI_ARCH="${OCI_ARCH:-$(oci_arch)}"

oci_json_str() { # string -> JSON string literal (quotes included)
  local s="$1"
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  s=${s//$'\r'/\\r}
  printf '"%s"' "$s"
}

oci_json_array() { # strings... -> JSON array of strings
  local out="[" sep="" a
  for a in "$@"; do
    out+="$sep$(oci_json_str "$a")"
    sep=","
  done
  printf '%s]' "$out"
}

oci__sha256() { sha256sum "$1" | cut -d' ' -f1; }
oci__size() { stat -c %s "$1"; }

# Deterministic tar of the contents of a directory (entry names without a leading ./).
oci__tar() { # dir, file list (NUL-separated), extra tar options...
  local dir="$1" list="$2"
  shift 2
  LC_ALL=C tar --create --file=- --directory="$dir" \
    --format=posix --pax-option='exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime' \
    --mtime="@$OCI_EPOCH" --numeric-owner "$@" \
    --no-recursion --null --files-from="$list"
}

oci__list() { # dir -> NUL-separated relative paths, parents before children, C order
  (cd "$1" && find . -mindepth 1 -printf '%P\0' | LC_ALL=C sort -z)
}

oci_layer() {
  local owner=() comment=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --root-owned) owner=(--owner=0 --group=0); shift ;;
      --comment) comment="$2"; shift 2 ;;
      *) break ;;
    esac
  done
  local dir="$1" out="$2"
  [[ -d "$dir" ]] || { echo "oci_layer: no such directory: $dir" >&2; return 1; }
  mkdir -p "$out"
  rm -f "$out/layer.tar.gz" "$out/diff_id" "$out/.files" "$out/.fifo" "$out/.diff"
  oci__list "$dir" >"$out/.files"

  # One pass: tar -> tee -> gzip, with the uncompressed stream hashed through a FIFO.
  mkfifo "$out/.fifo"
  sha256sum <"$out/.fifo" | cut -d' ' -f1 >"$out/.diff" &
  local hasher=$!
  oci__tar "$dir" "$out/.files" "${owner[@]}" | tee "$out/.fifo" | gzip -n -"$OCI_GZIP_LEVEL" >"$out/layer.tar.gz"
  local st=("${PIPESTATUS[@]}")
  wait "$hasher"
  rm -f "$out/.fifo" "$out/.files"
  if [[ "${st[*]}" != "0 0 0" ]]; then
    echo "oci_layer: packing $dir failed (tar/tee/gzip: ${st[*]})" >&2
    return 1
  fi
  echo "sha256:$(cat "$out/.diff")" >"$out/diff_id"
  rm -f "$out/.diff"
  printf '%s' "$comment" >"$out/comment"
}

oci_image_archive() {
  local out="$1" name="$2" config="$3"
  shift 3
  [[ $# -gt 0 ]] || { echo "oci_image_archive: no layers" >&2; return 1; }
  local stage
  stage="$(mktemp -d "${TMPDIR:-/tmp}/oci-image.XXXXXX")"
  mkdir -p "$stage/blobs/sha256"

  local l digest size diff_ids="" layers="" history="" docker_layers="" sep=""
  for l in "$@"; do
    [[ -f "$l/layer.tar.gz" && -f "$l/diff_id" ]] || { echo "oci_image_archive: not a layer: $l" >&2; rm -rf "$stage"; return 1; }
    digest="$(oci__sha256 "$l/layer.tar.gz")"
    size="$(oci__size "$l/layer.tar.gz")"
    # A symlink, not a copy: the final tar dereferences it.
    ln -sfn "$(cd "$l" && pwd)/layer.tar.gz" "$stage/blobs/sha256/$digest"
    diff_ids+="$sep$(oci_json_str "$(cat "$l/diff_id")")"
    layers+="$sep{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"sha256:$digest\",\"size\":$size}"
    history+="$sep{\"created\":\"$OCI_CREATED\",\"created_by\":$(oci_json_str "$(cat "$l/comment" 2>/dev/null || true)")}"
    docker_layers+="$sep\"blobs/sha256/$digest\""
    sep=","
  done

  local cfg="$stage/config.json"
  printf '{"architecture":"%s","os":"linux","created":"%s","config":%s,"rootfs":{"type":"layers","diff_ids":[%s]},"history":[%s]}' \
    "$OCI_ARCH" "$OCI_CREATED" "$config" "$diff_ids" "$history" >"$cfg"
  local cfg_digest cfg_size
  cfg_digest="$(oci__sha256 "$cfg")"
  cfg_size="$(oci__size "$cfg")"
  mv "$cfg" "$stage/blobs/sha256/$cfg_digest"

  local mf="$stage/manifest.oci.json"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[%s]}' \
    "$cfg_digest" "$cfg_size" "$layers" >"$mf"
  local mf_digest mf_size
  mf_digest="$(oci__sha256 "$mf")"
  mf_size="$(oci__size "$mf")"
  mv "$mf" "$stage/blobs/sha256/$mf_digest"

  local qname
  qname="$(oci_json_str "$name")"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$stage/oci-layout"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"%s","os":"linux"},"annotations":{"io.containerd.image.name":%s,"org.opencontainers.image.ref.name":%s}}]}' \
    "$mf_digest" "$mf_size" "$OCI_ARCH" "$qname" "$qname" >"$stage/index.json"
  printf '[{"Config":"blobs/sha256/%s","RepoTags":[%s],"Layers":[%s]}]' \
    "$cfg_digest" "$qname" "$docker_layers" >"$stage/manifest.json"

  oci__list "$stage" >"$stage.files"
  local tmp_out="$out.tmp.$$"
  if ! oci__tar "$stage" "$stage.files" --owner=0 --group=0 --dereference --mode='u+rwX,go+rX,go-w' >"$tmp_out"; then
    echo "oci_image_archive: writing $out failed" >&2
    rm -rf "$stage" "$stage.files" "$tmp_out"
    return 1
  fi
  mv -f "$tmp_out" "$out"
  rm -rf "$stage" "$stage.files"
  echo "sha256:$mf_digest" >"$out.digest"
}
