#!/usr/bin/env bash
# image-test: boots the built image under QEMU with software emulation (TCG: no KVM needed),
# UEFI firmware from the tools tree (OVMF for x86-64, AAVMF for arm64), and passes only when
# the box's smoke unit prints APPLIANCE-SMOKE-OK on the serial console.
#
# The image file is never written (the disk is a throw-away overlay) and never rebuilt for the
# test: the smoke switch (appliance.smoke=1) and the settings the box needs for this run come in
# through SMBIOS type 11 strings, which systemd-stub and systemd read at boot:
#   io.systemd.stub.kernel-cmdline-extra=appliance.smoke=1   enables appliance-smoke.service
#     (with no_timer_check: on a loaded host TCG can miss the kernel's IO-APIC timer check and
#     panic, "IO-APIC + timer doesn't work!"; panic=5 ends such a run at once, -no-reboot;
#     and a device timeout of 15 min instead of 90 s: at load 30 the initrd's udev is so slow
#     that /dev/gpt-auto-root timed out and the box sat in emergency mode);
#   io.systemd.credential.binary:peage.env=...                 points settle at a dev chain served
#                                                              from this machine (settle/devchain/
#                                                              cmd/devchain) and sets a payout address;
#   io.systemd.credential.binary:peage.hot-key=...             that chain's funded gas key;
#   io.systemd.credential.binary:smoke.update-{accept,refuse}.manifest[.sig]=...
#                                                              two signed releases (below).
#
# Usage: image/test.sh [x86-64|arm64]     (make image-test, make image-test ARCH=arm64)
# Env:   IMAGE_TEST_TIMEOUT seconds before QEMU is stopped (default 1800 x86-64, 3000 arm64)
#        IMAGE_TEST_CMDLINE     more kernel command line, e.g. systemd.show_status=1 to see
#                               each unit start on the serial console
#        IMAGE_TEST_SIGNING_KEY the private half of a key the image ships (default: the
#                               development build's throwaway key, see update-keys.sh)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
arch="${1:-${ARCH:-x86-64}}"
case "$arch" in x86-64 | amd64) arch=x86-64 ;; arm64 | aarch64) arch=arm64 ;; *) echo "test.sh: ARCH must be x86-64 or arm64" >&2; exit 2 ;; esac
export PATH="$PATH:/usr/local/go/bin"
out="$here/out/$arch"
img="$(readlink -f "$out/peage.raw" 2>/dev/null || true)"
[ -f "$img" ] || { echo "test.sh: no image in $out; run make image ARCH=$arch first" >&2; exit 1; }
run="$here/out/test-$arch"
rm -rf "$run" && mkdir -p "$run"
log="$run/serial.log"

# Signed updates: a release of the image's own binary signed by a key the image ships must
# verify on the box, one signed by a key made now must be refused. Both go in as credentials
# (smoke.update-accept.*, smoke.update-refuse.*); the box checks them with `appliance update
# verify` and its default key directory, the one the image ships the keys in. The signing key
# is the development build's throwaway key, or IMAGE_TEST_SIGNING_KEY (the .key of one of a
# release image's keys, on the release manager's machine).
keys="$out/update-keys"
[ "$arch" = x86-64 ] || "$here/binfmt.sh" "$arch" >/dev/null # the arm64 binary signs here
bin="$here/out/stage-$arch/usr/lib/peage/appliance"
[ -d "$keys" ] && [ -x "$bin" ] || { echo "test.sh: $out has no update-keys/ or $bin is missing; run make image ARCH=$arch again" >&2; exit 1; }
signing="${IMAGE_TEST_SIGNING_KEY:-}"
if [ -z "$signing" ] && [ -f "$keys/dev-throwaway.pub" ]; then
	signing="${PEAGE_UPDATE_DEV_KEYS:-${PEAGE_IMAGE_CACHE:-/var/cache/peage-image-cache}/dev-update-key}/dev-throwaway.key"
fi
[ -n "$signing" ] && [ -f "$signing" ] || { echo "test.sh: the image trusts $(ls "$keys" | tr '\n' ' ')and no signing key is at hand: give IMAGE_TEST_SIGNING_KEY=<the .key of one of them>" >&2; exit 1; }
release="$(basename "$img" .raw)"
release="${release#peage_}"
"$bin" update keygen -out "$run/other" 2>/dev/null
smoke_updates=()
for c in accept:"$signing" refuse:"$run/other.key"; do
	name=${c%%:*} key=${c#*:}
	mkdir -p "$run/update-$name"
	ln -s "$bin" "$run/update-$name/appliance"
	"$bin" update sign -key "$key" -version "$release" -os linux -arch "$(case $arch in x86-64) echo amd64 ;; *) echo arm64 ;; esac)" "$run/update-$name/appliance" >/dev/null
	for f in manifest manifest.sig; do
		smoke_updates+=(-smbios "type=11,value=io.systemd.credential.binary:smoke.update-$name.$f=$(base64 -w0 "$run/update-$name/appliance.$f")")
	done
done
"$bin" update verify -keys "$keys" "$run/update-accept/appliance.manifest" >/dev/null ||
	{ echo "test.sh: $signing is not one of the keys the image ships ($keys)" >&2; exit 1; }

# The chain the box settles against, on this machine's loopback (10.0.2.2 from the guest).
(cd "$repo" && go build -o "$run/devchain" ./settle/devchain/cmd/devchain)
"$run/devchain" -env "$run/peage.env" -hot-key "$run/hot-key" -rpc-host 10.0.2.2 &
chain=$!
cleanup() { kill "$chain" 2>/dev/null || true; [ -z "${qemu:-}" ] || kill "$qemu" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 1 120); do [ -s "$run/hot-key" ] && break; kill -0 "$chain" || exit 1; sleep 0.5; done
[ -s "$run/hot-key" ] || { echo "test.sh: the dev chain did not start" >&2; exit 1; }

smbios=(
	-smbios "type=11,value=io.systemd.stub.kernel-cmdline-extra=appliance.smoke=1 no_timer_check panic=5 systemd.default_device_timeout_sec=900${IMAGE_TEST_CMDLINE:+ $IMAGE_TEST_CMDLINE}"
	-smbios "type=11,value=io.systemd.credential.binary:peage.env=$(base64 -w0 "$run/peage.env")"
	-smbios "type=11,value=io.systemd.credential.binary:peage.hot-key=$(base64 -w0 "$run/hot-key")"
	"${smoke_updates[@]}"
)
tools="$("$here/tools.sh")"
case "$arch" in
x86-64)
	cp "$tools/usr/share/OVMF/OVMF_VARS_4M.fd" "$run/vars.fd"
	qemu=(qemu-system-x86_64 -machine q35 -cpu max
		-drive if=pflash,format=raw,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd
		-drive "if=pflash,format=raw,file=$run/vars.fd")
	timeout="${IMAGE_TEST_TIMEOUT:-1800}"
	;;
arm64)
	cp "$tools/usr/share/AAVMF/AAVMF_VARS.fd" "$run/vars.fd"
	qemu=(qemu-system-aarch64 -machine virt -cpu max
		-drive if=pflash,format=raw,readonly=on,file=/usr/share/AAVMF/AAVMF_CODE.no-secboot.fd
		-drive "if=pflash,format=raw,file=$run/vars.fd")
	timeout="${IMAGE_TEST_TIMEOUT:-3000}"
	;;
esac
# One vCPU: on a loaded host a second TCG vCPU thread gets starved and the guest stalls on it
# (RCU stalls, hung tasks); one vCPU only runs slower.
qemu+=(-accel tcg -smp "${IMAGE_TEST_CPUS:-1}" -m 2048 -no-reboot -display none -monitor none -serial "file:$log"
	-drive "if=none,id=disk,format=raw,file=$img,snapshot=on" -device virtio-blk-pci,drive=disk
	-nic user,model=virtio-net-pci "${smbios[@]}")

echo "test.sh: booting $img under TCG ($arch), serial console in $log" >&2
start=$(date +%s)
"$here/run-in-tools.sh" timeout "$timeout" "${qemu[@]}" &
qemu=$!
healthy=""
while kill -0 "$qemu" 2>/dev/null; do
	if [ -z "$healthy" ] && grep -qa 'APPLIANCE-SMOKE-OK' "$log" 2>/dev/null; then
		healthy=$(($(date +%s) - start))
	fi
	sleep 2
done
wait "$qemu" && rc=0 || rc=$?
qemu=""
total=$(($(date +%s) - start))
grep -a 'APPLIANCE-SMOKE' "$log" | sed 's/\r$//' >&2 || true
# The console prefixes each line of the unit's output ("[  134.9] smoke-check[526]: ").
if grep -qa 'APPLIANCE-SMOKE-OK$' <(tr -d '\r' <"$log") && ! grep -qa 'APPLIANCE-SMOKE-FAIL' "$log"; then
	[ -n "$healthy" ] || healthy=$total
	echo "test.sh: PASS $arch: healthy ${healthy}s after QEMU start, powered off after ${total}s (qemu exit $rc)" >&2
	exit 0
fi
echo "test.sh: FAIL $arch: no APPLIANCE-SMOKE-OK on the serial console after ${total}s (qemu exit $rc); last lines:" >&2
tail -40 "$log" | sed 's/\r$//' >&2
exit 1
