#!/usr/bin/env bash
# Installs the audio downloader of /v1/transcribe's speech-recognition path, only when
# missing: Debian's yt-dlp and ffmpeg (yt-dlp's audio extraction runs ffmpeg). The tests of
# api/routes/transcribe run them against a local video page (ytdlp_test.go). Debian's yt-dlp
# lags YouTube's changes: a production appliance that transcribes YouTube audio wants a current
# yt-dlp with its JavaScript runtime earlier in PATH (README, /v1/transcribe).
set -euo pipefail
. "$(dirname "$0")/lib.bash"
missing=()
command -v yt-dlp >/dev/null 2>&1 || missing+=(yt-dlp)
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
command -v ffprobe >/dev/null 2>&1 || missing+=(ffmpeg)
if [ "${#missing[@]}" -gt 0 ]; then
	apt_install "${missing[@]}"
fi
echo "yt-dlp $(yt-dlp --version 2>/dev/null || echo '(missing)'), $(ffmpeg -version 2>/dev/null | head -1 || echo 'ffmpeg (missing)')"
