package farmtest

import (
	"fmt"
	"os"
	"path/filepath"
)

// FontDir holds the fonts of Debian's fonts-dejavu-core, which ops/setup.d/fonts.sh installs.
const FontDir = "/usr/share/fonts/truetype/dejavu"

// FontFiles are the files of fonts-dejavu-core in FontDir. Test browsers see these and no other
// font: the directory also receives fonts-dejavu-extra's (italics, condensed, math) where that
// package happens to be installed, so it is not handed to fontconfig whole.
var FontFiles = []string{
	"DejaVuSans.ttf", "DejaVuSans-Bold.ttf",
	"DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf",
	"DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf",
}

// fontsConf lists no font directory but one holding FontFiles and includes none of the machine's
// /etc/fonts/conf.d, so neither extra fonts nor local rules change which glyphs a test page
// gets: CSS's generic families map to DejaVu, any other family falls back to DejaVu Sans (as
// Debian's own rules do; without this, fontconfig's best match for "Times New Roman", the
// default font, is whichever font scores first), and hinting is fixed, since it moves glyph
// advances by a pixel.
const fontsConf = `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir>%s</dir>
  <cachedir>%s</cachedir>
  <alias binding="same"><family>sans-serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
  <alias binding="same"><family>serif</family><prefer><family>DejaVu Serif</family></prefer></alias>
  <alias binding="same"><family>monospace</family><prefer><family>DejaVu Sans Mono</family></prefer></alias>
  <alias binding="same"><family>system-ui</family><prefer><family>DejaVu Sans</family></prefer></alias>
  <match target="pattern"><edit name="family" mode="append_last"><string>DejaVu Sans</string></edit></match>
  <match target="font">
    <edit name="antialias" mode="assign"><bool>true</bool></edit>
    <edit name="hinting" mode="assign"><bool>true</bool></edit>
    <edit name="hintstyle" mode="assign"><const>hintslight</const></edit>
    <edit name="autohint" mode="assign"><bool>false</bool></edit>
    <edit name="rgba" mode="assign"><const>none</const></edit>
    <edit name="embeddedbitmap" mode="assign"><bool>false</bool></edit>
  </match>
</fontconfig>
`

// writeFontsConf writes, into a new directory (the caller removes it), links to FontFiles and
// a fonts.conf naming only them, and returns the directory and the file.
func writeFontsConf() (dir, file string, err error) {
	for _, f := range FontFiles {
		if _, err := os.Stat(filepath.Join(FontDir, f)); err != nil {
			return "", "", fmt.Errorf("the test fonts are not installed (%s is missing): run ops/setup.sh (it installs Debian's fonts-dejavu-core)", f)
		}
	}
	dir, err = os.MkdirTemp("", "farmtest-fonts-")
	if err != nil {
		return "", "", err
	}
	fonts := filepath.Join(dir, "fonts")
	err = os.Mkdir(fonts, 0o755)
	for _, f := range FontFiles {
		if err == nil {
			err = os.Symlink(filepath.Join(FontDir, f), filepath.Join(fonts, f))
		}
	}
	file = filepath.Join(dir, "fonts.conf")
	if err == nil {
		err = os.WriteFile(file, []byte(fmt.Sprintf(fontsConf, fonts, filepath.Join(dir, "cache"))), 0o644)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", "", err
	}
	return dir, file, nil
}
