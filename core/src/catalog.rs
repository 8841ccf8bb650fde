//! The message catalog: every [`MessageKey`] in every [`Language`].
//!
//! Plain data, so that the browser package shows exactly the text the server
//! would. English is the protocol's own text (SPEC); the other languages are
//! this project's translations. Protocol names (AG-UI, A2A, iac-code), wire
//! identifiers (`runId`, `threadId`, `rosInvocationId`, `RunAgentInput`) and
//! media types stay untranslated so that a reader can search for them.

use crate::error::MessageKey;
use crate::i18n::Language;

/// The text of `key` in `language`.
pub fn text(key: MessageKey, language: Language) -> &'static str {
    let texts = texts(key);
    texts[Language::ALL
        .iter()
        .position(|l| *l == language)
        .unwrap_or(0)]
}

/// The texts of `key`, in the order of [`Language::ALL`]
/// (en, zh, es, fr, de, ja, pt).
fn texts(key: MessageKey) -> [&'static str; 7] {
    match key {
        // HTTP layer
        MessageKey::InvalidJson => [
            "The request body is not valid JSON.",
            "请求体不是有效的 JSON。",
            "El cuerpo de la solicitud no es un JSON válido.",
            "Le corps de la requête n'est pas un JSON valide.",
            "Der Anfragetext ist kein gültiges JSON.",
            "リクエスト本文が有効な JSON ではありません。",
            "O corpo da solicitação não é um JSON válido.",
        ],
        MessageKey::BodyNotObject => [
            "The request body must be a JSON object.",
            "请求体必须是 JSON 对象。",
            "El cuerpo de la solicitud debe ser un objeto JSON.",
            "Le corps de la requête doit être un objet JSON.",
            "Der Anfragetext muss ein JSON-Objekt sein.",
            "リクエスト本文は JSON オブジェクトである必要があります。",
            "O corpo da solicitação deve ser um objeto JSON.",
        ],
        MessageKey::UnsupportedMediaType => [
            "The request Content-Type must be application/json.",
            "请求的 Content-Type 必须为 application/json。",
            "El Content-Type de la solicitud debe ser application/json.",
            "Le Content-Type de la requête doit être application/json.",
            "Der Content-Type der Anfrage muss application/json sein.",
            "リクエストの Content-Type は application/json である必要があります。",
            "O Content-Type da solicitação deve ser application/json.",
        ],
        MessageKey::RequestTooLarge => [
            "The request body exceeds the maximum size.",
            "请求体超过了最大大小限制。",
            "El cuerpo de la solicitud supera el tamaño máximo.",
            "Le corps de la requête dépasse la taille maximale.",
            "Der Anfragetext überschreitet die maximale Größe.",
            "リクエスト本文が最大サイズを超えています。",
            "O corpo da solicitação excede o tamanho máximo.",
        ],
        MessageKey::Unauthorized => [
            "A valid bearer token is required.",
            "需要有效的 Bearer 令牌。",
            "Se requiere un token bearer válido.",
            "Un jeton bearer valide est requis.",
            "Ein gültiges Bearer-Token ist erforderlich.",
            "有効なベアラートークンが必要です。",
            "É necessário um token bearer válido.",
        ],
        MessageKey::NotAcceptable => [
            "The request must accept text/event-stream.",
            "请求必须接受 text/event-stream。",
            "La solicitud debe aceptar text/event-stream.",
            "La requête doit accepter text/event-stream.",
            "Die Anfrage muss text/event-stream akzeptieren.",
            "リクエストは text/event-stream を受け入れる必要があります。",
            "A solicitação deve aceitar text/event-stream.",
        ],
        // Envelope and extension (SPEC §2–3)
        MessageKey::InvalidEnvelope => [
            "Invalid AG-UI RunAgentInput envelope.",
            "AG-UI RunAgentInput 请求结构无效。",
            "El sobre RunAgentInput de AG-UI no es válido.",
            "Enveloppe RunAgentInput AG-UI invalide.",
            "Ungültige AG-UI-Anfrage (RunAgentInput).",
            "AG-UI の RunAgentInput エンベロープが無効です。",
            "Envelope RunAgentInput do AG-UI inválido.",
        ],
        MessageKey::ToolsNotSupported => [
            "Client-provided tools are not supported.",
            "不支持客户端提供的工具。",
            "No se admiten herramientas proporcionadas por el cliente.",
            "Les outils fournis par le client ne sont pas pris en charge.",
            "Vom Client bereitgestellte Tools werden nicht unterstützt.",
            "クライアントが提供するツールはサポートされていません。",
            "Ferramentas fornecidas pelo cliente não são suportadas.",
        ],
        MessageKey::InvalidForwardedProps => [
            "Invalid iac-code forwarded properties.",
            "iac-code 转发属性无效。",
            "Las propiedades reenviadas de iac-code no son válidas.",
            "Propriétés transmises iac-code invalides.",
            "Ungültige weitergeleitete iac-code-Eigenschaften.",
            "iac-code の転送プロパティが無効です。",
            "Propriedades encaminhadas do iac-code inválidas.",
        ],
        MessageKey::UserMessageRequired => [
            "A new run requires a user message.",
            "新的运行需要一条用户消息。",
            "Una nueva ejecución requiere un mensaje del usuario.",
            "Une nouvelle exécution nécessite un message utilisateur.",
            "Ein neuer Lauf erfordert eine Benutzernachricht.",
            "新しい実行にはユーザーメッセージが必要です。",
            "Uma nova execução requer uma mensagem do usuário.",
        ],
        // Content (SPEC §2.1)
        MessageKey::RemoteMediaUrl => [
            "Remote media URLs are not supported.",
            "不支持远程媒体 URL。",
            "No se admiten URL de medios remotos.",
            "Les URL de médias distants ne sont pas prises en charge.",
            "Entfernte Medien-URLs werden nicht unterstützt.",
            "リモートメディアの URL はサポートされていません。",
            "URLs de mídia remota não são suportadas.",
        ],
        MessageKey::UnsupportedContentPart => [
            "Only text and inline data images are supported.",
            "仅支持文本和内联数据图像。",
            "Solo se admiten texto e imágenes con datos incrustados.",
            "Seuls le texte et les images en données intégrées sont pris en charge.",
            "Nur Text und eingebettete Bilddaten werden unterstützt.",
            "テキストとインラインデータの画像のみサポートされています。",
            "Somente texto e imagens com dados incorporados são suportados.",
        ],
        MessageKey::UnsupportedImageType => [
            "The image media type is not supported.",
            "不支持该图像媒体类型。",
            "El tipo de medio de la imagen no es compatible.",
            "Le type de média de l'image n'est pas pris en charge.",
            "Der Medientyp des Bildes wird nicht unterstützt.",
            "画像のメディアタイプはサポートされていません。",
            "O tipo de mídia da imagem não é suportado.",
        ],
        MessageKey::InvalidImageBase64 => [
            "The image data is not valid base64.",
            "图像数据不是有效的 base64。",
            "Los datos de la imagen no son base64 válido.",
            "Les données de l'image ne sont pas en base64 valide.",
            "Die Bilddaten sind kein gültiges Base64.",
            "画像データが有効な base64 ではありません。",
            "Os dados da imagem não são base64 válido.",
        ],
        MessageKey::ImageTooLarge => [
            "An image exceeds the maximum size.",
            "某个图像超过了最大大小限制。",
            "Una imagen supera el tamaño máximo.",
            "Une image dépasse la taille maximale.",
            "Ein Bild überschreitet die maximale Größe.",
            "画像が最大サイズを超えています。",
            "Uma imagem excede o tamanho máximo.",
        ],
        MessageKey::TotalImagesTooLarge => [
            "The total image content exceeds the maximum size.",
            "图像内容的总大小超过了最大限制。",
            "El contenido total de imágenes supera el tamaño máximo.",
            "Le contenu total des images dépasse la taille maximale.",
            "Der gesamte Bildinhalt überschreitet die maximale Größe.",
            "画像コンテンツの合計が最大サイズを超えています。",
            "O conteúdo total de imagens excede o tamanho máximo.",
        ],
        MessageKey::InvalidImage => [
            "The image data is invalid.",
            "图像数据无效。",
            "Los datos de la imagen no son válidos.",
            "Les données de l'image sont invalides.",
            "Die Bilddaten sind ungültig.",
            "画像データが無効です。",
            "Os dados da imagem são inválidos.",
        ],
        MessageKey::InvalidContent => [
            "The user message content is invalid.",
            "用户消息内容无效。",
            "El contenido del mensaje del usuario no es válido.",
            "Le contenu du message utilisateur est invalide.",
            "Der Inhalt der Benutzernachricht ist ungültig.",
            "ユーザーメッセージの内容が無効です。",
            "O conteúdo da mensagem do usuário é inválido.",
        ],
        // Workspace (SPEC §3.1)
        MessageKey::WorkspaceNotAbsolute => [
            "The iac-code workspace must be an absolute path.",
            "iac-code 工作区必须是绝对路径。",
            "El espacio de trabajo de iac-code debe ser una ruta absoluta.",
            "L'espace de travail iac-code doit être un chemin absolu.",
            "Der iac-code-Arbeitsbereich muss ein absoluter Pfad sein.",
            "iac-code のワークスペースは絶対パスである必要があります。",
            "O espaço de trabalho do iac-code deve ser um caminho absoluto.",
        ],
        MessageKey::WorkspaceInvalid => [
            "The iac-code workspace is invalid.",
            "iac-code 工作区无效。",
            "El espacio de trabajo de iac-code no es válido.",
            "L'espace de travail iac-code est invalide.",
            "Der iac-code-Arbeitsbereich ist ungültig.",
            "iac-code のワークスペースが無効です。",
            "O espaço de trabalho do iac-code é inválido.",
        ],
        MessageKey::WorkspaceOutsideRoots => [
            "The iac-code workspace is outside the allowed roots.",
            "iac-code 工作区不在允许的根目录内。",
            "El espacio de trabajo de iac-code está fuera de las raíces permitidas.",
            "L'espace de travail iac-code est en dehors des racines autorisées.",
            "Der iac-code-Arbeitsbereich liegt außerhalb der erlaubten Stammverzeichnisse.",
            "iac-code のワークスペースが許可されたルートの外にあります。",
            "O espaço de trabalho do iac-code está fora das raízes permitidas.",
        ],
        MessageKey::WorkspaceNotDirectory => [
            "The iac-code workspace is not a directory.",
            "iac-code 工作区不是目录。",
            "El espacio de trabajo de iac-code no es un directorio.",
            "L'espace de travail iac-code n'est pas un répertoire.",
            "Der iac-code-Arbeitsbereich ist kein Verzeichnis.",
            "iac-code のワークスペースはディレクトリではありません。",
            "O espaço de trabalho do iac-code não é um diretório.",
        ],
        MessageKey::WorkspaceCannotCreate => [
            "The iac-code workspace cannot be created.",
            "无法创建 iac-code 工作区。",
            "No se puede crear el espacio de trabajo de iac-code.",
            "Impossible de créer l'espace de travail iac-code.",
            "Der iac-code-Arbeitsbereich kann nicht erstellt werden.",
            "iac-code のワークスペースを作成できません。",
            "Não é possível criar o espaço de trabalho do iac-code.",
        ],
        // Admission (SPEC §5)
        MessageKey::StateUnavailable => [
            "The AG-UI adapter state is unavailable.",
            "AG-UI 适配器状态不可用。",
            "El estado del adaptador AG-UI no está disponible.",
            "L'état de l'adaptateur AG-UI est indisponible.",
            "Der Zustand des AG-UI-Adapters ist nicht verfügbar.",
            "AG-UI アダプターの状態を利用できません。",
            "O estado do adaptador AG-UI está indisponível.",
        ],
        MessageKey::RunIdUsed => [
            "The AG-UI run id has already been used.",
            "该 AG-UI runId 已被使用。",
            "El runId de AG-UI ya se ha utilizado.",
            "Le runId AG-UI a déjà été utilisé.",
            "Die AG-UI-runId wurde bereits verwendet.",
            "この AG-UI の runId は既に使用されています。",
            "O runId do AG-UI já foi usado.",
        ],
        MessageKey::ThreadBusy => [
            "The AG-UI thread already has an active run.",
            "该 AG-UI 线程已有正在进行的运行。",
            "El hilo de AG-UI ya tiene una ejecución activa.",
            "Le fil AG-UI a déjà une exécution active.",
            "Der AG-UI-Thread hat bereits einen aktiven Lauf.",
            "この AG-UI スレッドには既に実行中の処理があります。",
            "A thread do AG-UI já tem uma execução ativa.",
        ],
        MessageKey::ThreadBindingConflict => [
            "The AG-UI thread is already bound to another workspace or caller.",
            "该 AG-UI 线程已绑定到其他工作区或调用方。",
            "El hilo de AG-UI ya está vinculado a otro espacio de trabajo o llamante.",
            "Le fil AG-UI est déjà lié à un autre espace de travail ou appelant.",
            "Der AG-UI-Thread ist bereits an einen anderen Arbeitsbereich oder Aufrufer gebunden.",
            "この AG-UI スレッドは既に別のワークスペースまたは呼び出し元に紐付けられています。",
            "A thread do AG-UI já está vinculada a outro espaço de trabalho ou chamador.",
        ],
        MessageKey::ResumeRequired => [
            "The AG-UI thread is waiting for interrupt responses.",
            "该 AG-UI 线程正在等待中断响应。",
            "El hilo de AG-UI está esperando respuestas a interrupciones.",
            "Le fil AG-UI attend des réponses aux interruptions.",
            "Der AG-UI-Thread wartet auf Antworten zu Unterbrechungen.",
            "この AG-UI スレッドは割り込みへの応答を待っています。",
            "A thread do AG-UI está aguardando respostas às interrupções.",
        ],
        MessageKey::ExecutionLost => [
            "The execution to resume is no longer available.",
            "要恢复的执行已不可用。",
            "La ejecución que se quiere reanudar ya no está disponible.",
            "L'exécution à reprendre n'est plus disponible.",
            "Die fortzusetzende Ausführung ist nicht mehr verfügbar.",
            "再開する実行はもう利用できません。",
            "A execução a ser retomada não está mais disponível.",
        ],
        MessageKey::ResumeMismatch => [
            "The resume request does not match the interrupted run.",
            "恢复请求与被中断的运行不匹配。",
            "La solicitud de reanudación no coincide con la ejecución interrumpida.",
            "La demande de reprise ne correspond pas à l'exécution interrompue.",
            "Die Fortsetzungsanfrage passt nicht zum unterbrochenen Lauf.",
            "再開リクエストが中断された実行と一致しません。",
            "A solicitação de retomada não corresponde à execução interrompida.",
        ],
        // Resume (SPEC §8)
        MessageKey::DuplicateInterruptIds => [
            "The resume contains duplicate interrupt ids.",
            "恢复请求包含重复的中断 ID。",
            "La reanudación contiene identificadores de interrupción duplicados.",
            "La reprise contient des identifiants d'interruption en double.",
            "Die Fortsetzung enthält doppelte Unterbrechungs-IDs.",
            "再開に重複した割り込み ID が含まれています。",
            "A retomada contém ids de interrupção duplicados.",
        ],
        MessageKey::ResumeIncomplete => [
            "The resume must resolve every pending interrupt exactly once.",
            "恢复请求必须对每个待处理的中断恰好处理一次。",
            "La reanudación debe resolver cada interrupción pendiente exactamente una vez.",
            "La reprise doit résoudre chaque interruption en attente exactement une fois.",
            "Die Fortsetzung muss jede ausstehende Unterbrechung genau einmal beantworten.",
            "再開では保留中の割り込みをそれぞれちょうど一度ずつ解決する必要があります。",
            "A retomada deve resolver cada interrupção pendente exatamente uma vez.",
        ],
        MessageKey::UnknownInterrupt => [
            "The resume references an unknown interrupt.",
            "恢复请求引用了未知的中断。",
            "La reanudación hace referencia a una interrupción desconocida.",
            "La reprise fait référence à une interruption inconnue.",
            "Die Fortsetzung verweist auf eine unbekannte Unterbrechung.",
            "再開が不明な割り込みを参照しています。",
            "A retomada faz referência a uma interrupção desconhecida.",
        ],
        MessageKey::PayloadRequired => [
            "A resolved interrupt requires a payload.",
            "已解决的中断需要提供 payload。",
            "Una interrupción resuelta requiere un payload.",
            "Une interruption résolue nécessite une charge utile.",
            "Eine beantwortete Unterbrechung erfordert einen Payload.",
            "解決済みの割り込みには payload が必要です。",
            "Uma interrupção resolvida requer um payload.",
        ],
        MessageKey::PayloadInvalid => [
            "The interrupt response payload is invalid.",
            "中断响应的 payload 无效。",
            "El payload de la respuesta a la interrupción no es válido.",
            "La charge utile de la réponse à l'interruption est invalide.",
            "Der Payload der Unterbrechungsantwort ist ungültig.",
            "割り込み応答の payload が無効です。",
            "O payload da resposta à interrupção é inválido.",
        ],
        MessageKey::AnswerMissing => [
            "The interrupt response does not contain an answer.",
            "中断响应中没有包含答案。",
            "La respuesta a la interrupción no contiene ninguna contestación.",
            "La réponse à l'interruption ne contient aucune réponse.",
            "Die Unterbrechungsantwort enthält keine Antwort.",
            "割り込み応答に回答が含まれていません。",
            "A resposta à interrupção não contém nenhuma resposta.",
        ],
        MessageKey::AlreadyApplied => [
            "The interrupt response has already been applied.",
            "该中断响应已被应用。",
            "La respuesta a la interrupción ya se ha aplicado.",
            "La réponse à l'interruption a déjà été appliquée.",
            "Die Unterbrechungsantwort wurde bereits angewendet.",
            "この割り込み応答は既に適用されています。",
            "A resposta à interrupção já foi aplicada.",
        ],
        MessageKey::InterruptExpired => [
            "The interrupt has expired.",
            "该中断已过期。",
            "La interrupción ha caducado.",
            "L'interruption a expiré.",
            "Die Unterbrechung ist abgelaufen.",
            "割り込みの有効期限が切れています。",
            "A interrupção expirou.",
        ],
        MessageKey::CancelledByResponse => [
            "The execution was cancelled by the interrupt response.",
            "执行已被中断响应取消。",
            "La ejecución fue cancelada por la respuesta a la interrupción.",
            "L'exécution a été annulée par la réponse à l'interruption.",
            "Die Ausführung wurde durch die Unterbrechungsantwort abgebrochen.",
            "割り込み応答により実行がキャンセルされました。",
            "A execução foi cancelada pela resposta à interrupção.",
        ],
        MessageKey::SessionLost => [
            "The iac-code session to resume is unavailable.",
            "要恢复的 iac-code 会话不可用。",
            "La sesión de iac-code que se quiere reanudar no está disponible.",
            "La session iac-code à reprendre est indisponible.",
            "Die fortzusetzende iac-code-Sitzung ist nicht verfügbar.",
            "再開する iac-code セッションを利用できません。",
            "A sessão do iac-code a ser retomada está indisponível.",
        ],
        MessageKey::TaskLost => [
            "The A2A task to resume is unavailable.",
            "要恢复的 A2A 任务不可用。",
            "La tarea A2A que se quiere reanudar no está disponible.",
            "La tâche A2A à reprendre est indisponible.",
            "Die fortzusetzende A2A-Aufgabe ist nicht verfügbar.",
            "再開する A2A タスクを利用できません。",
            "A tarefa A2A a ser retomada está indisponível.",
        ],
        MessageKey::SessionBackupNotReady => [
            "Session backup is still synchronizing. Retry after 3 seconds.",
            "会话备份仍在同步中。请在 3 秒后重试。",
            "La copia de seguridad de la sesión aún se está sincronizando. \
             Vuelva a intentarlo en 3 segundos.",
            "La sauvegarde de la session est encore en cours de synchronisation. \
             Réessayez dans 3 secondes.",
            "Die Sitzungssicherung wird noch synchronisiert. \
             Versuchen Sie es in 3 Sekunden erneut.",
            "セッションのバックアップはまだ同期中です。3 秒後に再試行してください。",
            "O backup da sessão ainda está sincronizando. Tente novamente em 3 segundos.",
        ],
        // Run (SPEC §6–7)
        MessageKey::Cancelled => [
            "The execution was cancelled.",
            "执行已取消。",
            "La ejecución fue cancelada.",
            "L'exécution a été annulée.",
            "Die Ausführung wurde abgebrochen.",
            "実行はキャンセルされました。",
            "A execução foi cancelada.",
        ],
        MessageKey::A2aExecutionFailed => [
            "The A2A execution failed.",
            "A2A 执行失败。",
            "La ejecución A2A falló.",
            "L'exécution A2A a échoué.",
            "Die A2A-Ausführung ist fehlgeschlagen.",
            "A2A の実行に失敗しました。",
            "A execução A2A falhou.",
        ],
        MessageKey::A2aUnavailable => [
            "The local A2A execution service is unavailable.",
            "本地 A2A 执行服务不可用。",
            "El servicio de ejecución A2A local no está disponible.",
            "Le service d'exécution A2A local est indisponible.",
            "Der lokale A2A-Ausführungsdienst ist nicht verfügbar.",
            "ローカルの A2A 実行サービスを利用できません。",
            "O serviço local de execução A2A está indisponível.",
        ],
        MessageKey::A2aRejectedResponse => [
            "The local A2A execution service rejected the interrupt response.",
            "本地 A2A 执行服务拒绝了中断响应。",
            "El servicio de ejecución A2A local rechazó la respuesta a la interrupción.",
            "Le service d'exécution A2A local a rejeté la réponse à l'interruption.",
            "Der lokale A2A-Ausführungsdienst hat die Unterbrechungsantwort abgelehnt.",
            "ローカルの A2A 実行サービスが割り込み応答を拒否しました。",
            "O serviço local de execução A2A rejeitou a resposta à interrupção.",
        ],
        MessageKey::A2aResponseNotAccepted => [
            "The A2A interrupt response was not accepted.",
            "A2A 未接受该中断响应。",
            "La respuesta a la interrupción A2A no fue aceptada.",
            "La réponse à l'interruption A2A n'a pas été acceptée.",
            "Die A2A-Unterbrechungsantwort wurde nicht angenommen.",
            "A2A の割り込み応答は受け入れられませんでした。",
            "A resposta à interrupção A2A não foi aceita.",
        ],
        MessageKey::ContextChanged => [
            "The A2A context identity changed unexpectedly.",
            "A2A 上下文标识意外变更。",
            "La identidad del contexto A2A cambió inesperadamente.",
            "L'identité du contexte A2A a changé de manière inattendue.",
            "Die Identität des A2A-Kontexts hat sich unerwartet geändert.",
            "A2A コンテキストの ID が予期せず変更されました。",
            "A identidade do contexto A2A mudou inesperadamente.",
        ],
        MessageKey::TaskChanged => [
            "The A2A task identity changed unexpectedly.",
            "A2A 任务标识意外变更。",
            "La identidad de la tarea A2A cambió inesperadamente.",
            "L'identité de la tâche A2A a changé de manière inattendue.",
            "Die Identität der A2A-Aufgabe hat sich unerwartet geändert.",
            "A2A タスクの ID が予期せず変更されました。",
            "A identidade da tarefa A2A mudou inesperadamente.",
        ],
        MessageKey::TaskMismatch => [
            "The A2A task identity does not match the interrupted run.",
            "A2A 任务标识与被中断的运行不匹配。",
            "La identidad de la tarea A2A no coincide con la ejecución interrumpida.",
            "L'identité de la tâche A2A ne correspond pas à l'exécution interrompue.",
            "Die Identität der A2A-Aufgabe passt nicht zum unterbrochenen Lauf.",
            "A2A タスクの ID が中断された実行と一致しません。",
            "A identidade da tarefa A2A não corresponde à execução interrompida.",
        ],
        MessageKey::SessionChanged => [
            "The iac-code session identity changed unexpectedly.",
            "iac-code 会话标识意外变更。",
            "La identidad de la sesión de iac-code cambió inesperadamente.",
            "L'identité de la session iac-code a changé de manière inattendue.",
            "Die Identität der iac-code-Sitzung hat sich unerwartet geändert.",
            "iac-code セッションの ID が予期せず変更されました。",
            "A identidade da sessão do iac-code mudou inesperadamente.",
        ],
        MessageKey::InterruptOtherTask => [
            "An interrupt belongs to another A2A task.",
            "某个中断属于另一个 A2A 任务。",
            "Una interrupción pertenece a otra tarea A2A.",
            "Une interruption appartient à une autre tâche A2A.",
            "Eine Unterbrechung gehört zu einer anderen A2A-Aufgabe.",
            "割り込みが別の A2A タスクに属しています。",
            "Uma interrupção pertence a outra tarefa A2A.",
        ],
        MessageKey::InterruptOtherContext => [
            "An interrupt belongs to another A2A context.",
            "某个中断属于另一个 A2A 上下文。",
            "Una interrupción pertenece a otro contexto A2A.",
            "Une interruption appartient à un autre contexte A2A.",
            "Eine Unterbrechung gehört zu einem anderen A2A-Kontext.",
            "割り込みが別の A2A コンテキストに属しています。",
            "Uma interrupção pertence a outro contexto A2A.",
        ],
        MessageKey::InterruptCommitFailed => [
            "The interrupted execution state could not be committed.",
            "无法提交被中断执行的状态。",
            "No se pudo confirmar el estado de la ejecución interrumpida.",
            "L'état de l'exécution interrompue n'a pas pu être enregistré.",
            "Der Zustand der unterbrochenen Ausführung konnte nicht gespeichert werden.",
            "中断された実行の状態を確定できませんでした。",
            "Não foi possível confirmar o estado da execução interrompida.",
        ],
        MessageKey::ExecutionCommitFailed => [
            "The execution mapping could not be committed.",
            "无法提交执行映射。",
            "No se pudo confirmar el mapeo de la ejecución.",
            "La correspondance de l'exécution n'a pas pu être enregistrée.",
            "Die Ausführungszuordnung konnte nicht gespeichert werden.",
            "実行のマッピングを確定できませんでした。",
            "Não foi possível confirmar o mapeamento da execução.",
        ],
        MessageKey::SessionCommitFailed => [
            "The execution session mapping could not be committed.",
            "无法提交执行的会话映射。",
            "No se pudo confirmar el mapeo de sesión de la ejecución.",
            "La correspondance de session de l'exécution n'a pas pu être enregistrée.",
            "Die Sitzungszuordnung der Ausführung konnte nicht gespeichert werden.",
            "実行のセッションマッピングを確定できませんでした。",
            "Não foi possível confirmar o mapeamento de sessão da execução.",
        ],
        MessageKey::ResponseCommitFailed => [
            "The accepted interrupt response could not be committed.",
            "无法提交已接受的中断响应。",
            "No se pudo confirmar la respuesta aceptada a la interrupción.",
            "La réponse acceptée à l'interruption n'a pas pu être enregistrée.",
            "Die angenommene Unterbrechungsantwort konnte nicht gespeichert werden.",
            "受け入れられた割り込み応答を確定できませんでした。",
            "Não foi possível confirmar a resposta aceita à interrupção.",
        ],
        MessageKey::ShuttingDown => [
            "The server is shutting down.",
            "服务器正在关闭。",
            "El servidor se está apagando.",
            "Le serveur est en cours d'arrêt.",
            "Der Server wird heruntergefahren.",
            "サーバーはシャットダウン中です。",
            "O servidor está sendo desligado.",
        ],
        // Cancel extension (SPEC §9)
        MessageKey::ExecutionNotFound => [
            "The execution was not found.",
            "未找到该执行。",
            "No se encontró la ejecución.",
            "L'exécution est introuvable.",
            "Die Ausführung wurde nicht gefunden.",
            "実行が見つかりませんでした。",
            "A execução não foi encontrada.",
        ],
        MessageKey::InvalidCancelRequest => [
            "The cancel request requires threadId and rosInvocationId.",
            "取消请求需要 threadId 和 rosInvocationId。",
            "La solicitud de cancelación requiere threadId y rosInvocationId.",
            "La demande d'annulation nécessite threadId et rosInvocationId.",
            "Die Abbruchanfrage erfordert threadId und rosInvocationId.",
            "キャンセルリクエストには threadId と rosInvocationId が必要です。",
            "A solicitação de cancelamento requer threadId e rosInvocationId.",
        ],
        // Interrupt texts (SPEC §7)
        MessageKey::PermissionRequired => [
            "Permission required",
            "需要权限",
            "Se requiere permiso",
            "Autorisation requise",
            "Berechtigung erforderlich",
            "許可が必要です",
            "Permissão necessária",
        ],
        MessageKey::InputRequired => [
            "Input required",
            "需要输入",
            "Se requiere una entrada",
            "Saisie requise",
            "Eingabe erforderlich",
            "入力が必要です",
            "Entrada necessária",
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_speaks_every_language() {
        for key in MessageKey::ALL {
            for language in Language::ALL {
                assert!(
                    !text(key, language).trim().is_empty(),
                    "{key:?} {language:?}"
                );
            }
        }
    }

    #[test]
    fn texts_follow_the_language_order() {
        assert_eq!(
            text(MessageKey::InterruptExpired, Language::Pt),
            "A interrupção expirou."
        );
        assert_eq!(
            text(MessageKey::InterruptExpired, Language::De),
            "Die Unterbrechung ist abgelaufen."
        );
    }
}
